//! Dependencies point down: a module of the library may use only modules of lower layers (and
//! its own). The layers, bottom first, are those of docs/architecture.md; this test parses every
//! file of src/ (the `syn` crate), resolves every path that names a module of the crate —
//! `crate::…`, `self::…`, `super::…` (as deep as it goes), in `use` trees however they are
//! grouped or laid out, in code, and in macro invocations — to the top-level module it lands
//! in, and fails on one that points up or sideways, naming the file and the line.

use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::visit::Visit;

/// Each top-level module of src/ and its layer: a module may use only modules of a lower
/// number, or its own.
const LAYERS: &[(&str, u32)] = &[
    ("error", 1),
    ("platform", 1),
    ("units", 1),
    ("text", 0),
    ("stats", 2),
    ("calibration", 3),
    ("model", 4),
    ("loads", 5),
    ("workers", 5),
    ("store", 5),
    ("suites", 6),
    ("standard", 7),
    ("compare", 7),
    ("fleet", 7),
    ("history", 7),
    ("render", 8),
    ("cli", 9),
];

/// Modules that may use only some of the layers below them. A renderer reads only what a result
/// holds: the model and the figures derived from it (compare, fleet), with the plain types the
/// model stores (calibration's, platform's) and the arithmetic (stats, units) — never a suite,
/// a load, the store or the run's plan, which would describe an old result by today's tables.
const ONLY: &[(&str, &[&str])] = &[(
    "render",
    &[
        "error",
        "platform",
        "units",
        "text",
        "stats",
        "calibration",
        "model",
        "compare",
        "fleet",
        "history",
    ],
)];

/// Whether `from` may use `to` (both top-level modules).
fn allowed(from: &str, to: &str) -> Result<(), String> {
    let (Some(f), Some(t)) = (layer(from), layer(to)) else {
        return Err(format!("crate::{to} is in no layer"));
    };
    if from == to {
        return Ok(());
    }
    if t >= f {
        return Err(format!("{from} (layer {f}) uses {to} (layer {t})"));
    }
    match ONLY.iter().find(|(m, _)| *m == from) {
        Some((_, may)) if !may.contains(&to) => Err(format!(
            "{from} uses {to}, which is not among what it may use ({})",
            may.join(", ")
        )),
        _ => Ok(()),
    }
}

fn layer(module: &str) -> Option<u32> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|&(_, l)| l)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file of src/: `src/model/noise/mod.rs` → `[model, noise]`,
/// `src/stats/summary.rs` → `[stats, summary]`, `src/lib.rs` → `[]` (the crate root).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut path: Vec<String> = rel
        .components()
        .map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect();
    if matches!(
        path.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        path.pop();
    }
    path
}

/// Where a path that names the crate's own modules lands: the top-level module, `Some("")`
/// for the crate root itself, `None` for a path that does not start in the crate (`std::…`,
/// another crate, a local name, `::x`).
fn resolve(module: &[String], path: &[String]) -> Option<String> {
    resolve_path(module, path, &[]).map(|p| p.first().cloned().unwrap_or_default())
}

/// The whole module path a path names, as [`resolve`] finds it; a path that starts with one of
/// `children` (the modules the file declares, `mod x;`) starts in the file's own module.
fn resolve_path(module: &[String], path: &[String], children: &[String]) -> Option<Vec<String>> {
    let (mut base, rest) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("self") => (module.to_vec(), &path[1..]),
        Some("super") => (module.to_vec(), path),
        Some(first) if children.iter().any(|c| c == first) => (module.to_vec(), path),
        _ => return None,
    };
    let mut rest = rest;
    while rest.first().is_some_and(|s| s == "super") {
        assert!(
            base.pop().is_some(),
            "`super` above the crate root in {module:?}"
        );
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// Every crate-internal module one file names: (line, top-level module).
struct Uses {
    /// The module the visitor is in: the file's, plus any inline `mod x { … }` around it.
    module: Vec<String>,
    found: Vec<(usize, String)>,
    /// The modules the file declares (`mod x;`), which its paths may start with.
    children: Vec<String>,
    /// Every module path named, whole.
    paths: Vec<Vec<String>>,
}

impl Uses {
    fn note(&mut self, span: Span, path: &[String]) {
        if let Some(top) = resolve(&self.module, path) {
            self.found.push((span.start().line, top));
        }
        if let Some(whole) = resolve_path(&self.module, path, &self.children) {
            self.paths.push(whole);
        }
    }

    /// The leaves of a `use` tree, each as a whole path (groups, nesting and renames resolved).
    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>, span: Option<Span>) {
        match tree {
            syn::UseTree::Path(p) => {
                let span = span.unwrap_or(p.ident.span());
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix, Some(span));
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                self.leaf(prefix, &n.ident, span.unwrap_or(n.ident.span()));
            }
            syn::UseTree::Rename(r) => self.leaf(prefix, &r.ident, span.unwrap_or(r.ident.span())),
            syn::UseTree::Glob(g) => self.note(span.unwrap_or(g.star_token.span), prefix),
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(item, prefix, None);
                }
            }
        }
    }

    fn leaf(&mut self, prefix: &[String], ident: &syn::Ident, span: Span) {
        let mut path = prefix.to_vec();
        // `use crate::model::{self, x}`: `self` is the prefix itself.
        if ident != "self" {
            path.push(ident.to_string());
        }
        self.note(span, &path);
    }

    /// Paths written inside a macro's tokens (`format!("{}", crate::units::x())`,
    /// `$crate::…` in a `macro_rules!`), which syn leaves unparsed.
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                // `$crate` in a `macro_rules!` is the `$`, then `crate`.
                TokenTree::Ident(id)
                    if matches!(id.to_string().as_str(), "crate" | "self" | "super") =>
                {
                    let mut path = vec![id.to_string()];
                    let mut j = i + 1;
                    while let (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) =
                        (trees.get(j), trees.get(j + 1))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        match trees.get(j + 2) {
                            Some(TokenTree::Ident(next)) => path.push(next.to_string()),
                            _ => break,
                        }
                        j += 3;
                    }
                    if path.len() > 1 {
                        self.note(id.span(), &path);
                    }
                    i = j.max(i + 1);
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Uses {
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if item.content.is_none() {
            let mut path = self.module.clone();
            path.push(item.ident.to_string());
            self.paths.push(path);
        }
        if item.content.is_some() {
            self.module.push(item.ident.to_string());
            syn::visit::visit_item_mod(self, item);
            self.module.pop();
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if item.leading_colon.is_none() {
            self.use_tree(&item.tree, &mut Vec::new(), None);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        // One segment (`self`, a local name) names no other module.
        if path.leading_colon.is_none() && path.segments.len() > 1 {
            let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
            self.note(path.segments[0].ident.span(), &names);
        }
        syn::visit::visit_path(self, path);
    }

    /// `pub(crate)`, `pub(super)`, `pub(in crate::x)` say who may see an item, not what it uses.
    fn visit_vis_restricted(&mut self, _: &'ast syn::VisRestricted) {}

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.tokens(mac.tokens.clone());
    }
}

/// Every crate-internal module `text` (the file at `module`) names: (line, top-level module).
fn used_modules(module: &[String], text: &str) -> Vec<(usize, String)> {
    let file = syn::parse_file(text).unwrap_or_else(|e| panic!("{module:?} does not parse: {e}"));
    let mut uses = Uses {
        module: module.to_vec(),
        found: Vec::new(),
        children: Vec::new(),
        paths: Vec::new(),
    };
    uses.visit_file(&file);
    uses.found
}

/// Every module path `text` (the file at `module`) names, whole: `use`s, paths in code and in
/// macros, paths that start at a module the file declares, and the declarations themselves.
fn named_paths(module: &[String], text: &str) -> Vec<Vec<String>> {
    let file = syn::parse_file(text).unwrap_or_else(|e| panic!("{module:?} does not parse: {e}"));
    let children = file
        .items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Mod(m) if m.content.is_none() => Some(m.ident.to_string()),
            _ => None,
        })
        .collect();
    let mut uses = Uses {
        module: module.to_vec(),
        found: Vec::new(),
        children,
        paths: Vec::new(),
    };
    uses.visit_file(&file);
    uses.paths
}

/// (file:line, from, to) of every use of a higher layer; tests of a module (below
/// `#[cfg(test)]`) count too.
fn upward_edges(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut bad = Vec::new();
    for file in files {
        let module = module_path(src, &file);
        // main.rs and lib.rs sit above every layer.
        let Some(from) = module.first().cloned() else {
            continue;
        };
        let Some(from_layer) = layer(&from) else {
            panic!(
                "{} is in no layer: add its module to LAYERS and to docs/architecture.md",
                file.display()
            );
        };
        let text = fs::read_to_string(&file).unwrap();
        for (line, to) in used_modules(&module, &text) {
            if to.is_empty() {
                bad.push(format!(
                    "{}:{line}: {from} (layer {from_layer}) uses the crate root",
                    file.display()
                ));
                continue;
            }
            if layer(&to).is_none() {
                panic!("{}:{line}: crate::{to} is in no layer", file.display());
            }
            if let Err(why) = allowed(&from, &to) {
                bad.push(format!("{}:{line}: {why}", file.display()));
            }
        }
    }
    bad
}

#[test]
fn dependencies_point_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = upward_edges(&src);
    assert!(
        bad.is_empty(),
        "{} use(s) of a module of the same or a higher layer:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

fn names(module: &[&str], text: &str) -> Vec<String> {
    let module: Vec<String> = module.iter().map(|s| s.to_string()).collect();
    used_modules(&module, text)
        .into_iter()
        .map(|(_, top)| top)
        .collect()
}

#[test]
fn the_check_resolves_every_way_of_naming_a_module() {
    let m = ["model", "noise"];
    assert_eq!(
        names(&m, "use crate::suites::noise::NoiseResult;"),
        ["suites"]
    );
    assert_eq!(
        names(&m, "use crate::{model::RunResult, render};"),
        ["model", "render"]
    );
    // rustfmt's own layout of a long group: one item a line.
    assert_eq!(
        names(
            &m,
            "use crate::{\n    model::RunResult,\n    suites::noise::{\n        NoiseResult,\n    },\n};\n"
        ),
        ["model", "suites"]
    );
    // A legal nested group: each leaf lands in its own module, none "in no layer".
    assert_eq!(
        names(&m, "use crate::{stats::{Summary, welch_test}, units};"),
        ["stats", "stats", "units"]
    );
    // super:: as deep as it goes, from a file and from an inline module.
    assert_eq!(names(&m, "use super::super::cli::Args;"), ["cli"]);
    assert_eq!(names(&m, "use super::analysis;"), ["model"]);
    assert_eq!(
        names(
            &m,
            "mod tests {\n    use super::*;\n    use super::super::super::render;\n}\n"
        ),
        ["model", "render"]
    );
    assert_eq!(names(&m, "fn f() { let x = self::y::z(); }"), ["model"]);
    // Paths in code and inside macros.
    assert_eq!(
        names(
            &m,
            "fn f() -> u64 { crate::platform::clock::monotonic_ns() + crate::stats::g() }"
        ),
        ["platform", "stats"]
    );
    assert_eq!(
        names(&m, "fn f() { println!(\"{}\", crate::cli::name()); }"),
        ["cli"]
    );
    // Other crates, std and local names are not the crate's modules.
    assert!(names(
        &m,
        "use std::fs; use serde::Serialize; fn f() { fs::read(\"x\"); }"
    )
    .is_empty());
}

#[test]
fn the_check_sees_an_upward_use_however_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    fs::create_dir_all(src.join("model/noise")).unwrap();
    fs::write(
        src.join("model/mod.rs"),
        "use crate::{\n    stats::{Summary, welch_test},\n    units,\n};\n",
    )
    .unwrap();
    fs::write(
        src.join("model/noise/mod.rs"),
        "use crate::{\n    stats::Summary,\n    suites::noise::NoiseResult,\n};\n\
         fn f() { super::super::render::x(); }\n",
    )
    .unwrap();
    fs::write(
        src.join("stats.rs"),
        "// crate::cli in a comment is fine\nconst S: &str = \"crate::cli in a string too\";\n",
    )
    .unwrap();
    fs::create_dir_all(src.join("render")).unwrap();
    fs::write(
        src.join("render/index.rs"),
        "use crate::model::index::TestResult;\nuse crate::suites::index::registry::find;\n",
    )
    .unwrap();
    let bad = upward_edges(src);
    assert_eq!(bad.len(), 3, "{bad:?}");
    assert!(
        bad[0].ends_with("model/noise/mod.rs:3: model (layer 4) uses suites (layer 6)"),
        "{}",
        bad[0]
    );
    assert!(
        bad[1].ends_with("model/noise/mod.rs:5: model (layer 4) uses render (layer 8)"),
        "{}",
        bad[1]
    );
    // A renderer may not read a suite's tables, though suites lie below it.
    assert!(
        bad[2].contains("render/index.rs:2: render uses suites, which is not among"),
        "{}",
        bad[2]
    );
}

/// Matches over `SuiteResult` that name every suite and have no catch-all arm: each one is a
/// place a new suite must be added to.
#[derive(Default)]
struct SuiteMatches {
    lines: Vec<usize>,
}

impl<'ast> Visit<'ast> for SuiteMatches {
    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        let mut suites = 0;
        let mut catch_all = false;
        for arm in &m.arms {
            let mut pats = vec![&arm.pat];
            while let Some(p) = pats.pop() {
                match p {
                    syn::Pat::Or(or) => pats.extend(or.cases.iter()),
                    syn::Pat::TupleStruct(t) => {
                        let names: Vec<String> = t
                            .path
                            .segments
                            .iter()
                            .map(|s| s.ident.to_string())
                            .collect();
                        if names.len() >= 2 && names[names.len() - 2] == "SuiteResult" {
                            suites += 1;
                        }
                    }
                    syn::Pat::Wild(_) | syn::Pat::Ident(_) => catch_all = true,
                    _ => {}
                }
            }
        }
        if suites > 0 && !catch_all {
            self.lines.push(m.match_token.span.start().line);
        }
        syn::visit::visit_expr_match(self, m);
    }
}

/// Each file of src/ that holds a match over every suite, with its lines.
fn exhaustive_suite_matches(src: &Path) -> Vec<(String, Vec<usize>)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let text = fs::read_to_string(&file).unwrap();
        let mut v = SuiteMatches::default();
        v.visit_file(&syn::parse_file(&text).unwrap());
        if !v.lines.is_empty() {
            let rel = file.strip_prefix(src).unwrap().display().to_string();
            found.push((rel, v.lines));
        }
    }
    found
}

/// A new measuring suite touches the files docs/architecture.md lists ("Add a measuring
/// suite"): of the code over any result, only the two dispatches name every suite —
/// `SuiteResult::data` (what a result says of itself) and `render::view` (how it is shown).
/// A match over every suite anywhere else would be one more file to touch.
#[test]
fn only_the_two_dispatches_name_every_suite() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = exhaustive_suite_matches(&src);
    let files: Vec<&str> = found.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        files,
        ["model/mod.rs", "render/mod.rs"],
        "matches over every SuiteResult variant with no catch-all arm: {found:?}"
    );
}

#[test]
fn the_suite_match_check_sees_an_exhaustive_match_and_not_a_partial_one() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("a.rs"),
        "fn f(s: &SuiteResult) -> u8 {\n    match s {\n        SuiteResult::Noise(_) | SuiteResult::Index(_) => 1,\n        crate::model::SuiteResult::Sched(_) => 2,\n        SuiteResult::Interactive(_) => 3,\n    }\n}\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("b.rs"),
        "fn g(s: &SuiteResult) -> u8 {\n    match s {\n        SuiteResult::Noise(_) => 1,\n        _ => 0,\n    }\n}\nfn h(x: Option<u8>) -> u8 {\n    match x {\n        Some(v) => v,\n        None => 0,\n    }\n}\n",
    )
    .unwrap();
    assert_eq!(
        exhaustive_suite_matches(dir.path()),
        vec![("a.rs".to_string(), vec![2])]
    );
}

/// The layers where each suite has a folder or a file of its own (`model/<suite>/`,
/// `suites/<suite>/`, `render/<suite>.rs`, `cli/<suite>.rs`).
const SUITE_HOMES: [&str; 4] = ["model", "suites", "render", "cli"];

/// The suites, from the code: the variants of `model::SuiteResult` in `src`, lower-cased, as
/// the JSON's `suite` tag and the suites' folders name them.
fn suites_of(src: &Path) -> Vec<String> {
    let file = syn::parse_file(&fs::read_to_string(src.join("model/mod.rs")).unwrap()).unwrap();
    file.items
        .iter()
        .find_map(|item| match item {
            syn::Item::Enum(e) if e.ident == "SuiteResult" => Some(
                e.variants
                    .iter()
                    .map(|v| v.ident.to_string().to_lowercase())
                    .collect(),
            ),
            _ => None,
        })
        .expect("src/model/mod.rs declares enum SuiteResult")
}

/// The files outside every suite's own folders that name each of `suites` (a module of it in
/// one of its homes): the files a new suite adds a line to.
fn files_naming_every_suite(src: &Path, suites: &[String]) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let module = module_path(src, &file);
        let own = module.len() >= 2
            && SUITE_HOMES.contains(&module[0].as_str())
            && suites.contains(&module[1]);
        if own {
            continue;
        }
        let paths = named_paths(&module, &fs::read_to_string(&file).unwrap());
        let names = |suite: &str| {
            paths
                .iter()
                .any(|p| p.len() >= 2 && SUITE_HOMES.contains(&p[0].as_str()) && p[1] == suite)
        };
        if suites.iter().all(|s| names(s)) {
            out.push(file.strip_prefix(src).unwrap().display().to_string());
        }
    }
    out
}

/// docs/architecture.md ("Add a measuring suite"): a suite that takes part in `run`, the live
/// line, the report and the fleet touches five files outside its own folders, and a sixth for
/// a command of its own. Only those files name every suite; one more would be one more file a
/// new suite must touch.
#[test]
fn a_new_suite_touches_four_files_outside_its_folders_and_a_fifth_for_its_command() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let suites = suites_of(&src);
    // Every suite of the code has its own folders, wakeup among them.
    assert!(suites.iter().any(|s| s == "wakeup"), "{suites:?}");
    for s in &suites {
        for home in ["model", "suites"] {
            assert!(src.join(home).join(s).is_dir(), "{home}/{s}/ missing");
        }
    }
    assert_eq!(
        files_naming_every_suite(&src, &suites),
        [
            "cli/mod.rs",
            "model/mod.rs",
            "render/mod.rs",
            "suites/event.rs",
            "suites/mod.rs",
        ]
    );
}

#[test]
fn the_suite_count_sees_declarations_relative_paths_and_uses() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("model/noise")).unwrap();
    fs::create_dir_all(dir.path().join("render")).unwrap();
    // A registry: declarations and paths from the module that declares them.
    fs::write(
        dir.path().join("model/mod.rs"),
        "pub mod noise;\npub mod index;\nfn f() { interactive::x(); }\nuse sched::Y;\nmod interactive;\nmod sched;\n",
    )
    .unwrap();
    // A suite's own file names itself and others freely.
    fs::write(
        dir.path().join("model/noise/mod.rs"),
        "use crate::model::{index, interactive, sched};\n",
    )
    .unwrap();
    // Three of four suites: not a registry.
    fs::write(
        dir.path().join("render/mod.rs"),
        "use crate::model::noise::A;\nuse super::model::index::B;\nfn g() { crate::suites::sched::c(); }\n",
    )
    .unwrap();
    let suites = ["noise", "index", "interactive", "sched"].map(String::from);
    assert_eq!(
        files_naming_every_suite(dir.path(), &suites),
        ["model/mod.rs"]
    );
}
