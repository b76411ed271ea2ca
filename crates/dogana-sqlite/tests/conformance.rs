//! The conformance suite (`dogana_sqlite::conformance`) run against the SQLite store. Each
//! function checks `verify` after every step (RECV-12, RECOVERY-01).

dogana_sqlite::conformance_tests!(dogana_sqlite::conformance::SqliteReceiver;
    // rule: CHECK-01, CHECK-18, CHECK-19, GATE-02, LOADER-04, LOADER-05, LOADER-06, RECV-07, RECV-17
    honest_delivery_passes_every_check,
    // rule: PLAN-03, PLAN-09, RECV-07, RECV-11, RECV-14
    full_replaces_all,
    // rule: PLAN-01, PLAN-02, PLAN-04, PLAN-11
    window_replaces_window,
    // rule: PLAN-05, PLAN-06, CHECK-03, CHECK-06
    changes_upsert_and_tombstone,
    // rule: PLAN-14, CHECK-04
    deleted_column_never_published,
    // rule: PLAN-07, PLAN-08, CONTRACT-25, CONTRACT-26
    keyless_append_and_window,
    // rule: RECV-01, RECV-02, ALG-02, LOADER-01, WIRE-20
    replay_answers_original,
    // rule: RECV-02, LOADER-01
    replay_without_content_hash_reads_nothing,
    // rule: RECV-03, CHECK-08, RECOVERY-07
    repeated_manifest_over_other_bytes_refused,
    // rule: RECV-04, ALG-07
    rejected_manifest_decided_anew,
    // rule: RECV-05, LOADER-02, LOADER-03, GATE-08
    preflight_failure_reads_no_rows,
    // rule: GATE-22
    receipt_filed_under_contract_table,
    // rule: CHECK-06, CHECK-17, RECV-08
    check_parse_fails,
    // rule: CHECK-02, TRUST-03, RECV-08
    check_rows_fails,
    // rule: CHECK-03, CHECK-05, RECV-08
    check_deleted_fails,
    // rule: CHECK-09, RECV-08
    check_keys_fails,
    // rule: CHECK-10, CHECK-11, RECV-08
    check_window_fails,
    // rule: CHECK-12, CHECK-14, RECV-08
    check_cursor_fails,
    // rule: CHECK-07, CONTRACT-16, CONTRACT-18
    check_schema_hash,
    // rule: CHECK-08, RECV-08
    check_content_hash_fails,
    // rule: CHECK-18, RECV-08
    check_values_fails,
    // rule: RECOVERY-04, RECV-08
    check_columns_and_schema_change,
    // rule: CHECK-16, PLAN-11, PLAN-12
    keys_elsewhere_refuses_moved_key,
    // rule: GATE-03, GATE-04, GATE-05, TRANS-02, RECV-05
    core_checks_reject,
    // rule: RECV-10, LOADER-08, ALG-05
    stale_head_redecided,
    // rule: RECV-10
    stale_head_redecided_to_rejection,
    // rule: RECV-10, RECV-02, ALG-02
    concurrent_duplicate_becomes_replay,
    // rule: RECOVERY-01, RECV-12, RECV-19
    verify_detects_wrong_ledger,
    // rule: RECOVERY-02, RECV-23
    rebuild_recovers_no_rows,
    // rule: RECV-13
    readers_see_rows_with_their_ledger,
    // rule: EVOL-01, RECOVERY-03, RECV-21
    contract_evolution,
    // rule: CHECK-02, RECV-08
    ragged_csv_refused,
    // rule: CHECK-06, RECV-08
    invalid_utf8_refused,
    // rule: CHECK-09, CHECK-10, RECV-08
    missing_bound_column_refused,
    // rule: TRUST-03, CHECK-02, RECV-08
    truncated_file_refused,
    // rule: LOADER-10
    odd_names_are_quoted,
    // rule: GATE-25, RECV-08
    impossible_names_refused,
);
