//! What one side of `compare` names, parsed from its argument: stored results of a tag or a
//! host, a group of `--repeat` runs, one result, or a list of runs of one job. Parsing is
//! apart from loading, so the rules hold without a store and are tested here.

use crate::error::UsageError;
use crate::store::Filter;

/// One side of a comparison, as its argument names it.
#[derive(Debug, Clone, PartialEq)]
pub enum SideArg {
    /// The stored results a tag (`tag:KEY=VALUE`) or a host (`host:NAME`, its hostname or
    /// label) selects.
    Selection(Filter),
    /// The runs of a `--repeat` group, `gID` (named after its first run's id).
    Group(i64),
    /// One result: a stored id or a result file.
    One(String),
    /// Several runs of one job, `A1,A2,A3`: ids or files.
    List(Vec<String>),
}

impl SideArg {
    /// Parses `arg`. `exists` says whether a path exists: a file of that name is always one
    /// result, whatever its name looks like (`g12`, `tag:x=y`, a comma in it).
    pub fn parse(arg: &str, exists: impl Fn(&str) -> bool) -> Result<SideArg, UsageError> {
        if exists(arg) {
            return Ok(SideArg::One(arg.to_string()));
        }
        if let Some(tag) = arg.strip_prefix("tag:") {
            let Some((k, v)) = tag.split_once('=').filter(|(k, _)| !k.is_empty()) else {
                return Err(UsageError::new(format!(
                    "{arg}: a tag side is tag:KEY=VALUE"
                )));
            };
            return Ok(SideArg::Selection(Filter {
                tags: vec![(k.to_string(), v.to_string())],
                ..Filter::default()
            }));
        }
        if let Some(host) = arg.strip_prefix("host:") {
            return Ok(SideArg::Selection(Filter {
                host: Some(host.to_string()),
                ..Filter::default()
            }));
        }
        if let Some(g) = arg.strip_prefix('g').and_then(|g| g.parse::<i64>().ok()) {
            return Ok(SideArg::Group(g));
        }
        if !arg.contains(',') {
            return Ok(SideArg::One(arg.to_string()));
        }
        let parts: Vec<String> = arg.split(',').map(|p| p.trim().to_string()).collect();
        if parts.iter().any(String::is_empty) {
            return Err(UsageError::new(format!(
                "{arg}: an empty name in a list of results (A1,A2,A3)"
            )));
        }
        Ok(SideArg::List(parts))
    }

    /// A selection side narrowed by the filter options (`--host`, `--tag`, `--since`), and its
    /// label: the argument as given, or the whole filter in words when the options narrowed it.
    pub fn narrowed(
        mut filter: Filter,
        arg: &str,
        narrow: &Filter,
    ) -> Result<(Filter, String), UsageError> {
        if filter.host.is_some() && narrow.host.is_some() {
            return Err(UsageError::new(format!(
                "{arg} and --host both name a host"
            )));
        }
        filter.host = filter.host.or(narrow.host.clone());
        filter.tags.extend(narrow.tags.iter().cloned());
        filter.since = narrow.since;
        let label = if *narrow == Filter::default() {
            arg.to_string()
        } else {
            filter.describe()
        };
        Ok((filter, label))
    }

    /// The label of a list side: "results 3,4,5" for ids, else the names as given.
    pub fn list_label(parts: &[String]) -> String {
        if parts.iter().all(|p| p.parse::<i64>().is_ok()) {
            format!("results {}", parts.join(","))
        } else {
            parts.join(",")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(arg: &str) -> Result<SideArg, UsageError> {
        SideArg::parse(arg, |p| p == "g7" || p == "a,b.json")
    }

    #[test]
    fn each_kind_of_side_is_told_apart() {
        assert_eq!(parse("3").unwrap(), SideArg::One("3".into()));
        assert_eq!(parse("run.json").unwrap(), SideArg::One("run.json".into()));
        assert_eq!(parse("g12").unwrap(), SideArg::Group(12));
        assert_eq!(
            parse("3, 4,5").unwrap(),
            SideArg::List(vec!["3".into(), "4".into(), "5".into()])
        );
        let SideArg::Selection(tag) = parse("tag:kernel=6.18").unwrap() else {
            panic!("a tag side")
        };
        assert_eq!(tag.tags, [("kernel".to_string(), "6.18".to_string())]);
        let SideArg::Selection(host) = parse("host:rack12-07").unwrap() else {
            panic!("a host side")
        };
        assert_eq!(host.host.as_deref(), Some("rack12-07"));
    }

    #[test]
    fn a_file_that_exists_is_one_result_whatever_its_name() {
        assert_eq!(parse("g7").unwrap(), SideArg::One("g7".into()));
        assert_eq!(parse("a,b.json").unwrap(), SideArg::One("a,b.json".into()));
        // `gx` is no group: a result named so.
        assert_eq!(parse("gx").unwrap(), SideArg::One("gx".into()));
    }

    #[test]
    fn malformed_sides_are_refused_with_their_reason() {
        assert!(parse("tag:kernel")
            .unwrap_err()
            .to_string()
            .contains("tag:KEY=VALUE"));
        assert!(parse("tag:=x")
            .unwrap_err()
            .to_string()
            .contains("tag:KEY=VALUE"));
        assert!(parse("3,,4")
            .unwrap_err()
            .to_string()
            .contains("an empty name"));
    }

    #[test]
    fn the_filter_options_narrow_a_selection_and_name_it() {
        let SideArg::Selection(f) = parse("tag:kernel=a").unwrap() else {
            panic!()
        };
        let (same, label) =
            SideArg::narrowed(f.clone(), "tag:kernel=a", &Filter::default()).unwrap();
        assert_eq!((same, label.as_str()), (f.clone(), "tag:kernel=a"));
        let narrow = Filter {
            host: Some("h1".into()),
            tags: vec![("fleet".into(), "lab".into())],
            ..Filter::default()
        };
        let (both, label) = SideArg::narrowed(f, "tag:kernel=a", &narrow).unwrap();
        assert_eq!(both.host.as_deref(), Some("h1"));
        assert_eq!(both.tags.len(), 2);
        assert_eq!(label, both.describe());
        let SideArg::Selection(h) = parse("host:h2").unwrap() else {
            panic!()
        };
        assert!(SideArg::narrowed(h, "host:h2", &narrow)
            .unwrap_err()
            .to_string()
            .contains("both name a host"));
        assert_eq!(
            SideArg::list_label(&["3".into(), "4".into()]),
            "results 3,4"
        );
        assert_eq!(
            SideArg::list_label(&["a.json".into(), "4".into()]),
            "a.json,4"
        );
    }
}
