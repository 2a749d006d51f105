//! How long the property tests run: `PROPTEST_CASES` when set (a long hunt), else a short run
//! that fits the suite. Failures are kept beside the test's source so a found case is re-run.

use proptest::prelude::ProptestConfig;
use proptest::test_runner::FileFailurePersistence;

pub fn cases(default: u32) -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases: n,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}
