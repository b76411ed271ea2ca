//! Planning reads: requirements, `plan_delivery` and `next_extraction` (PLANNER).
