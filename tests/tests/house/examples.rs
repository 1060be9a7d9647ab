//! The docs' examples of output and docs/page.png are what the demo gives
//! now: scripts/docs-examples.py over the demo's captures
//! (scripts/demo-captures.sh), about 20 s. On Debian 12's stack, whose
//! output the docs show. A difference names the fix:
//! `scripts/docs-examples.py --write` rewrites the examples (and the
//! screenshot) from the program's output.

#[cfg(not(feature = "sid"))]
#[test]
fn the_docs_examples_are_what_the_demo_prints() {
    use xpu_asm_tests::*;
    let tmp = stack_temp_dir("docs-examples");
    demo(tmp.path());
    let mut cmd = std::process::Command::new("python3");
    cmd.arg(workspace_dir().join("scripts/docs-examples.py"))
        .arg("--demo")
        .arg(tmp.path())
        .env("XPU_ASM_RUN", xpu_asm_run());
    hermetic(&mut cmd);
    let r = run(cmd, &tmp.path().join("target/demo/capture"));
    assert!(
        r.output.status.success(),
        "the docs' examples differ from what the program prints; \
         `scripts/docs-examples.py --write` rewrites them:\n{}{}",
        r.stderr(),
        r.stdout()
    );
}
