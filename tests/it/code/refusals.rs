//! What cannot go is refused before any object is made: code larger than one ConfigMap holds
//! (naming the largest files and the fix), a link out of the directory, code without a command.

use gantry_test_support::{CliEnv, text};

use super::made;

#[tokio::test(flavor = "multi_thread")]
async fn three_megabytes_of_code_and_a_link_to_etc_passwd_are_refused_before_anything_is_made() {
    let e = CliEnv::start().await;
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(src.join("train.py"), "print(1)\n").unwrap();
    std::fs::write(src.join("embeddings.npy"), vec![1u8; 2 * 1024 * 1024]).unwrap();
    std::fs::write(src.join("vocab.json"), vec![b'{'; 1024 * 1024]).unwrap();

    let out = e
        .gantry_in(src, &["launch", "--code", "."], &["python3", "train.py"])
        .await;
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("too large"), "{said}");
    assert!(said.contains("3.0 MiB in 3 files"), "{said}");
    let first = said.find("embeddings.npy").unwrap();
    let second = said.find("vocab.json").unwrap();
    assert!(first < second, "the largest first: {said}");
    assert!(said.contains(".gantryignore"), "{said}");
    assert!(
        !text(&out.stdout).contains("launched"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(made(&e).await, Vec::<String>::new());

    // Left out by a .gantryignore, the rest goes.
    std::fs::write(src.join(".gantryignore"), "*.npy\nvocab.json\n").unwrap();
    let out = e
        .gantry_in(src, &["launch", "--code", "."], &["python3", "train.py"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("code: 2 files, "),
        "{}",
        text(&out.stdout)
    );

    #[cfg(unix)]
    {
        let linked = tempfile::tempdir().unwrap();
        std::fs::write(linked.path().join("train.py"), "print(1)\n").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", linked.path().join("users.txt")).unwrap();
        let before = made(&e).await;
        let out = e
            .gantry_in(
                linked.path(),
                &["launch", "--code", "."],
                &["python3", "train.py"],
            )
            .await;
        let said = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(said.contains("users.txt"), "{said}");
        assert!(said.contains("/etc/passwd"), "{said}");
        assert!(said.contains("outside the code directory"), "{said}");
        assert_eq!(made(&e).await, before);
    }

    // Code needs the command that runs it.
    let out = e.gantry_in(src, &["launch", "--code", "."], &[]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("code needs the command"),
        "{}",
        text(&out.stderr)
    );
    drop(e.cloud);
}
