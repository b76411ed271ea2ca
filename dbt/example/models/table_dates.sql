-- Each table's dates and exact instant, through the package's macros. `missing` has no ledger.
{% set tables = ['orders', 'events', 'items', 'notes', 'missing'] %}
{% for t in tables %}
select '{{ t }}' as table_name,
       {{ dogana.dogana_complete_as_of(t) }} as complete_as_of,
       {{ dogana.dogana_deletions_as_of(t) }} as deletions_as_of,
       {{ dogana.dogana_exact_as_of(t) }} as exact_as_of
{% if not loop.last %}union all{% endif %}
{% endfor %}
