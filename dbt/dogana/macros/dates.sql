{#-
  What a dogana store's ledger proves about a table, read from the `dogana_regions` view (one row
  per region: table_name, region_index, ..., complete_as_of, deletions_as_of; a region nothing
  is proven about has both dates null).

  Each macro returns a scalar SQL expression (a subquery) usable wherever a timestamp is:

    select {{ dogana.dogana_complete_as_of('orders') }} as orders_complete_as_of

  SQL's min ignores nulls, so each date is the minimum over the regions only when every region's
  date is non-null; otherwise (an unknown region, or no ledger for the table at all) it is NULL,
  never the minimum of the known regions. Portable SQL (DuckDB and Postgres): count, min, max,
  case; no dialect-specific function.

  `table_name` is the contract's table name (a string), or a relation (its identifier is taken).
  `regions` is the relation or SQL name of the view; default the var `dogana_regions`, else
  `dogana_regions` unqualified.
-#}

{% macro dogana_regions_relation(regions=none) -%}
  {%- if regions is not none -%}
    {{ return(regions) }}
  {%- else -%}
    {{ return(var('dogana_regions', 'dogana_regions')) }}
  {%- endif -%}
{%- endmacro %}

{% macro dogana_table_literal(table_name) -%}
  {%- if table_name is not string -%}
    {%- set table_name = table_name.identifier -%}
  {%- endif -%}
  '{{ table_name | replace("'", "''") }}'
{%- endmacro %}

{#- The table's complete_as_of: the least over its regions, NULL if any region is unknown
    (CLAIMS-08). -#}
{% macro dogana_complete_as_of(table_name, regions=none) -%}
(select case when count(*) > 0 and count(r.complete_as_of) = count(*)
             then min(r.complete_as_of) end
   from {{ dogana.dogana_regions_relation(regions) }} r
  where r.table_name = {{ dogana.dogana_table_literal(table_name) }})
{%- endmacro %}

{#- The table's deletions_as_of: the least over its regions, NULL if any region is unknown
    (CLAIMS-08). -#}
{% macro dogana_deletions_as_of(table_name, regions=none) -%}
(select case when count(*) > 0 and count(r.deletions_as_of) = count(*)
             then min(r.deletions_as_of) end
   from {{ dogana.dogana_regions_relation(regions) }} r
  where r.table_name = {{ dogana.dogana_table_literal(table_name) }})
{%- endmacro %}

{#- The instant p at which the table is exact: every region's dates are (p, p), the same p for
    every region (GROUP-01); else NULL. Not min(min(c, d)), and not "the two minima are equal":
    a window proven later than the rest of its table gives equal minima and no common instant.
    Freshness plays no part (GROUP-02). -#}
{% macro dogana_exact_as_of(table_name, regions=none) -%}
(select case when count(*) > 0
              and count(r.complete_as_of) = count(*)
              and count(r.deletions_as_of) = count(*)
              and min(r.complete_as_of) = max(r.complete_as_of)
              and min(r.deletions_as_of) = max(r.deletions_as_of)
              and min(r.complete_as_of) = min(r.deletions_as_of)
             then min(r.complete_as_of) end
   from {{ dogana.dogana_regions_relation(regions) }} r
  where r.table_name = {{ dogana.dogana_table_literal(table_name) }})
{%- endmacro %}
