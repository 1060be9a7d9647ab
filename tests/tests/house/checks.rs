//! The checks themselves, on small trees of sources written for them.

use super::*;

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = t.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    t
}

#[test]
fn a_circle_of_modules_is_named_with_its_imports() {
    let t = tree(&[
        ("lib.rs", "pub mod report;\npub mod run;\n"),
        (
            "report/mod.rs",
            "//! Uses [`crate::nothing`] in a comment only.\npub mod table;\n\nuse crate::run::launch::RunInfo;\n",
        ),
        ("report/table.rs", "pub fn f() -> String { \"crate::run\".into() }\n"),
        ("run/mod.rs", "pub mod launch;\n"),
        (
            "run/launch.rs",
            "pub struct RunInfo;\nfn exit() -> u32 {\n    crate::report::exit_code()\n}\n",
        ),
    ]);
    let found = import_circles(t.path());
    assert_eq!(
        found,
        [
            "circle: report -> run::launch -> report (report/mod.rs:4 imports crate::run::launch::RunInfo; \
             run/launch.rs:3 imports crate::report::exit_code)",
            "circle between folders: report -> run -> report (report/mod.rs:4 imports \
             crate::run::launch::RunInfo; run/launch.rs:3 imports crate::report::exit_code)"
        ],
        "{found:#?}"
    );
}

#[test]
fn a_circle_of_folders_is_found_when_no_two_files_make_one() {
    let t = tree(&[
        ("lib.rs", "pub mod a;\npub mod b;\n"),
        ("a/mod.rs", "pub mod x;\npub mod y;\n"),
        ("a/x.rs", "use super::super::b::p::P;\n"),
        ("a/y.rs", "pub struct Y;\n"),
        ("b/mod.rs", "pub mod p;\npub mod q;\n"),
        ("b/p.rs", "pub struct P;\n"),
        ("b/q.rs", "use crate::a::{self, y::Y};\n"),
    ]);
    let found = import_circles(t.path());
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].starts_with("circle between folders: a -> b -> a (a/x.rs:1 imports super::super::b::p::P; b/q.rs:1 imports crate::a"),
        "{}",
        found[0]
    );
}

#[test]
fn test_code_relative_paths_and_inline_modules_are_read_as_rust_reads_them() {
    let t = tree(&[
        ("lib.rs", "pub mod a;\npub mod b;\npub use a::A;\n"),
        (
            "a/mod.rs",
            "pub mod inner;\npub struct A;\npub fn f() { inner::g(); let _ = ('x', '\\'', '{'); let _ = r#\"crate::b\"#; }\n\
             #[cfg(test)]\nmod tests {\n    use crate::b::B;\n}\n",
        ),
        ("a/inner.rs", "pub fn g() {}\nmod table {\n    use super::g;\n}\n"),
        ("b.rs", "pub struct B;\nfn h<'a>(_: &'a str) { crate::a::inner::g(); }\n"),
    ]);
    assert_eq!(import_circles(t.path()), Vec::<String>::new());
    let g = graph(t.path());
    let edges: Vec<String> = g
        .edges
        .keys()
        .map(|(a, b)| format!("{} -> {}", show_mod(a), show_mod(b)))
        .collect();
    assert_eq!(edges, ["crate -> a", "a -> a::inner", "b -> a::inner"]);
    assert_eq!(
        layers(t.path()),
        [vec!["b".to_string()], vec!["a".to_string()]]
    );
}

#[test]
fn long_functions_are_named_with_file_and_line() {
    let body = |n: usize| {
        (0..n - 2)
            .map(|i| format!("    let _x{i} = \"}}\";\n"))
            .collect::<String>()
    };
    let text = format!(
        "// fn not_a_function() {{\npub(crate) fn eighty() {{\n{}}}\n\nimpl X {{\n    pub unsafe extern \"C\" fn eighty_one(&self) {{\n{}    }}\n    fn declared();\n}}\n",
        body(80),
        body(81)
    );
    let t = tree(&[("lib.rs", &text)]);
    let found = long_functions(t.path(), t.path());
    assert_eq!(found, ["lib.rs:84: eighty_one is 81 lines"]);
    let lengths: Vec<(usize, String)> = functions(&text)
        .into_iter()
        .map(|(n, name, _)| (n, name))
        .collect();
    assert_eq!(
        lengths,
        [(80, "eighty".to_string()), (81, "eighty_one".to_string())]
    );
}

#[test]
fn test_helpers_are_the_top_level_functions_that_are_not_tests() {
    let text =
        "#[test]\nfn a_test() {}\n\n/// Doc.\n#[allow(dead_code)]\npub(crate) fn helper() {}\n\
                #[test]\n// a comment\nfn another_test() {}\nimpl X {\n    fn method() {}\n}\n\
                pub fn generic<T>(_: T) {}\n";
    assert_eq!(helper_names(text), ["helper", "generic"]);
}
