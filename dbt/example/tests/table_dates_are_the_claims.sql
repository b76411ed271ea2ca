-- The macros give what `dogana claims` gives for each table (scripts/test-dbt.sh delivers them):
-- a date is NULL when any region is unknown, never the minimum of the known ones; exact_as_of is
-- the instant every region is exact at, not the minimum of the dates.
with expected as (
    select 'orders' as table_name,
           cast('2026-10-26T06:00:00Z' as timestamp with time zone) as complete_as_of,
           cast('2026-10-26T06:00:00Z' as timestamp with time zone) as deletions_as_of,
           cast('2026-10-26T06:00:00Z' as timestamp with time zone) as exact_as_of
    union all
    -- an unknown region either side of the window: nothing at table level
    select 'events', null, null, null
    union all
    -- the window proven on Monday, the rest on Sunday: equal minima, no common instant
    select 'items',
           cast('2026-10-25T06:00:00Z' as timestamp with time zone),
           cast('2026-10-25T06:00:00Z' as timestamp with time zone),
           null
    union all
    -- patched: complete as of Monday, deletions as of Sunday
    select 'notes',
           cast('2026-10-26T06:00:00Z' as timestamp with time zone),
           cast('2026-10-25T06:00:00Z' as timestamp with time zone),
           null
    union all
    select 'missing', null, null, null
)
select e.table_name, 'differs' as problem
  from expected e
  left join {{ ref('table_dates') }} d on d.table_name = e.table_name
 where d.table_name is null
    or d.complete_as_of is distinct from e.complete_as_of
    or d.deletions_as_of is distinct from e.deletions_as_of
    or d.exact_as_of is distinct from e.exact_as_of
