{#-
  Generic test: the table's ledger proves every region, and (with max_age) no region's
  complete_as_of is older than max_age at `now`, so the table's complete_as_of is not older
  either. A region exactly max_age old passes (CLAIMS-05).

    sources:
      - name: shop
        tables:
          - name: orders
            data_tests:
              - dogana.dogana_fresh:
                  arguments:
                    max_age: "36 hours"        # any interval literal both DuckDB and Postgres cast
                    # now: "2026-10-27T07:00:00Z"   default: current_timestamp
                    # table_name: orders            default: the tested relation's identifier
                    # regions: other.dogana_regions default: var('dogana_regions')

  One failing row per problem: `no ledger` (the store holds nothing for the table), `unknown
  region` (a region with a null date), `older than max_age` (a region proven before now -
  max_age).
-#}
{% test dogana_fresh(model, max_age=none, now=none, table_name=none, regions=none) %}
{%- set name = table_name if table_name is not none else model -%}
{%- set at = "current_timestamp" if now is none else "cast('" ~ now ~ "' as timestamp with time zone)" -%}
with regions as (
    select r.region_index, r.complete_as_of, r.deletions_as_of
      from {{ dogana.dogana_regions_relation(regions) }} r
     where r.table_name = {{ dogana.dogana_table_literal(name) }}
)
select 'no ledger' as problem,
       cast(null as integer) as region_index,
       cast(null as timestamp with time zone) as complete_as_of,
       cast(null as timestamp with time zone) as deletions_as_of
  from (select count(*) as n from regions) c
 where c.n = 0
union all
select 'unknown region' as problem, region_index, complete_as_of, deletions_as_of
  from regions
 where complete_as_of is null or deletions_as_of is null
{%- if max_age is not none %}
union all
select 'older than max_age' as problem, region_index, complete_as_of, deletions_as_of
  from regions
 where complete_as_of < {{ at }} - cast('{{ max_age }}' as interval)
{%- endif %}
{% endtest %}
