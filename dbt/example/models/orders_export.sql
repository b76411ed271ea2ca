-- The store's orders as a typed export: every column cast to the type its YAML declares
-- (schema.yml, an enforced model contract), so that the data_type dbt records in
-- target/manifest.json is the column's real type. dogana reads them from there:
-- dogana contract --dbt-manifest target/manifest.json --model orders_export
select
    cast(id as bigint) as id,
    cast(order_date as date) as order_date,
    cast(updated_at as timestamp with time zone) as updated_at,
    cast(amount as numeric(12, 2)) as amount,
    cast(customer as varchar) as customer
from {{ source('dogana', 'orders') }}
