//! A directory with a `train.py` and a `.gitignore`d 5 MB file, launched as code: what goes,
//! what the attempt records, what a retry runs, and what `gantry code` writes back.

use gantry_test_support::{CliEnv, kubectl_available, text};
use serde_json::Value;

use super::{kubectl, unpack_configmap};

const TRAIN: &str = "import os\nprint('step=1 loss=0.5', os.environ.get('RANK'))\n";

async fn status(e: &CliEnv) -> Value {
    let out = e.gantry(&["status", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn code_goes_without_its_ignored_file_is_recorded_and_a_retry_runs_the_same_code() {
    if !kubectl_available() {
        return;
    }
    let e = CliEnv::start().await;
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(src.join("train.py"), TRAIN).unwrap();
    std::fs::write(src.join(".gitignore"), "data.bin\n").unwrap();
    std::fs::write(src.join("data.bin"), vec![42u8; 5 * 1024 * 1024]).unwrap();
    let expected = gantry::code::pack(src).unwrap().record;

    let out = e
        .gantry_in(
            src,
            &["launch", "--code", ".", "--env", "SIM_LOG_LINES=5"],
            &["python3", "train.py", "--lr", "3e-4"],
        )
        .await;
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}{}", text(&out.stderr));
    assert!(
        said.starts_with("code: 2 files, "),
        "what goes is said first: {said}"
    );
    assert!(said.contains("image: python:3.12-slim"), "{said}");
    assert!(
        said.contains("launched Job ml-training-job (attempt 1)"),
        "{said}"
    );

    // The attempt runs to its end.
    let follow = e.gantry(&["logs", "--follow"]).await;
    assert_eq!(follow.status.code(), Some(0), "{}", text(&follow.stderr));

    // Its ConfigMap holds train.py, not the ignored file, as the container unpacks it.
    let unpacked = dir.path().join("unpacked-1");
    unpack_configmap(&e, "ml-training-job", &unpacked);
    assert_eq!(
        std::fs::read_to_string(unpacked.join("train.py")).unwrap(),
        TRAIN
    );
    assert!(unpacked.join(".gitignore").is_file());
    assert!(!unpacked.join("data.bin").exists());
    // The Job runs the command given, in the directory the code is unpacked into.
    let job: Value = serde_json::from_slice(&kubectl(
        &e,
        &["get", "job", "ml-training-job", "-o", "json"],
    ))
    .unwrap();
    let trainer = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        trainer["command"],
        serde_json::json!(["python3", "train.py", "--lr", "3e-4"])
    );
    assert_eq!(trainer["workingDir"], "/workspace");
    assert_eq!(trainer["image"], "python:3.12-slim");

    let s = status(&e).await;
    let code = &s["job"]["attempts"][0]["code"];
    assert_eq!(code["digest"], expected.digest.as_str(), "{code}");
    assert_eq!(code["files"], 2, "{code}");
    assert_eq!(code["bytes"], expected.bytes, "{code}");
    assert_eq!(code["dir"], expected.dir.as_str(), "{code}");
    assert!(
        code["commit"].is_null() && code["dirty"].is_null(),
        "{code}"
    );
    let text_status = e.gantry(&["status"]).await;
    let said = text(&text_status.stdout);
    let short = &expected.digest["sha256:".len().."sha256:".len() + 12];
    assert!(
        said.contains(&format!("\n    code {short} · 2 files · ")),
        "the code under its attempt: {said}"
    );

    // train.py changes; the retry runs the code of the attempt it follows.
    std::fs::write(src.join("train.py"), "print('changed')\n").unwrap();
    let retry = e.gantry(&["retry"]).await;
    assert_eq!(retry.status.code(), Some(0), "{}", text(&retry.stderr));
    let follow = e.gantry(&["logs", "--follow"]).await;
    assert_eq!(follow.status.code(), Some(0), "{}", text(&follow.stderr));
    let s = status(&e).await;
    let second = &s["job"]["attempts"][1];
    assert_eq!(second["name"], "ml-training-job-2");
    assert_eq!(
        second["code"]["digest"],
        expected.digest.as_str(),
        "{second}"
    );
    let unpacked = dir.path().join("unpacked-2");
    unpack_configmap(&e, "ml-training-job-2", &unpacked);
    assert_eq!(
        std::fs::read_to_string(unpacked.join("train.py")).unwrap(),
        TRAIN
    );

    // Deleting the first attempt leaves the second its own copy; `gantry code` writes it back.
    let deleted = e
        .gantry(&["delete", "attempt", "ml-training-job", "--yes"])
        .await;
    assert_eq!(deleted.status.code(), Some(0), "{}", text(&deleted.stderr));
    let back = dir.path().join("back");
    let written = e
        .gantry(&["code", "ml-training-job-2", back.to_str().unwrap()])
        .await;
    let said = text(&written.stdout);
    assert_eq!(
        written.status.code(),
        Some(0),
        "{said}{}",
        text(&written.stderr)
    );
    assert!(said.contains(&expected.digest), "{said}");
    assert_eq!(
        std::fs::read(back.join("train.py")).unwrap(),
        TRAIN.as_bytes()
    );
    assert_eq!(
        std::fs::read(back.join(".gitignore")).unwrap(),
        b"data.bin\n"
    );
    assert!(!back.join("data.bin").exists());
    // Not over what is there.
    let again = e
        .gantry(&["code", "ml-training-job-2", back.to_str().unwrap()])
        .await;
    assert_eq!(again.status.code(), Some(2));
    assert!(
        text(&again.stderr).contains("not empty"),
        "{}",
        text(&again.stderr)
    );
    drop(e.cloud);
}
