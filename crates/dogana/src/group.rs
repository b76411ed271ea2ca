//! Tables read together: `Group`, its claims, `Group::apply` and `plan_together` (GROUP).
