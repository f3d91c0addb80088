//! An account's subject mapping (`mappings { src: dest }`): a source pattern and weighted
//! destinations, each a [`SubjectTransform`], optionally scoped to a cluster.
//!
//! Built with Go's rules (`AddWeightedMappings`): no destination listed twice, every weight at
//! most 100 and the weights of one cluster scope at most 100 in total. When a scope's weights
//! do not reach 100 and the source itself is not listed, the source is added with the
//! remainder, so that share of messages keeps its subject; a listed source means the
//! remainder is dropped (no destination is chosen). Weights are kept cumulative, smallest
//! first, so a choice is one random number below 100 and a scan.

use std::fmt;

use crate::mapping::TransformError;
use crate::transform::SubjectTransform;
use crate::validate::is_valid_subject;

/// Most a weight, or a scope's total, may be (percent).
const WEIGHT_TOTAL_MAX: u8 = 100;

/// One destination as configured (or as shown by monitoring, with its cumulative weight).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MapDest {
    pub subject: String,
    /// Percent of the messages, 0 to 100.
    pub weight: u8,
    /// Only for servers of this cluster; empty for all.
    pub cluster: String,
}

/// Why a mapping is refused, in Go's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MappingError {
    /// The source is not a valid subject (Go's `ErrBadSubject`).
    BadSubject,
    Duplicate(String),
    IndividualWeight,
    TotalWeight,
    Transform(TransformError),
}

impl fmt::Display for MappingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadSubject => f.write_str("invalid subject"),
            Self::Duplicate(subject) => write!(f, "duplicate entry for {subject:?}"),
            Self::IndividualWeight => f.write_str("individual weights need to be <= 100"),
            Self::TotalWeight => f.write_str("total weight needs to be <= 100"),
            Self::Transform(err) => err.fmt(f),
        }
    }
}

impl std::error::Error for MappingError {}

impl From<TransformError> for MappingError {
    fn from(err: TransformError) -> Self {
        Self::Transform(err)
    }
}

#[derive(Debug, Clone)]
struct Weighted {
    transform: SubjectTransform,
    dest: String,
    /// Cumulative: this destination is chosen for a draw below it (and not below the one
    /// before).
    upto: u8,
}

/// A compiled weighted mapping.
#[derive(Debug, Clone)]
pub struct WeightedMapping {
    source: String,
    literal: bool,
    dests: Vec<Weighted>,
    /// Cluster-scoped destinations, in the order their clusters first appear.
    scoped: Vec<(String, Vec<Weighted>)>,
}

/// What a mapping made of a subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mapped {
    /// The source does not match: the subject stays.
    Unmatched,
    /// The new subject is in the output buffer.
    To,
    /// The draw fell in the share no destination takes: the message goes nowhere.
    Dropped,
}

impl WeightedMapping {
    /// Go's `AddWeightedMappings` checks and compilation.
    ///
    /// # Errors
    /// The first problem Go would report.
    pub fn new(source: &str, dests: &[MapDest]) -> Result<Self, MappingError> {
        if !is_valid_subject(source.as_bytes()) {
            return Err(MappingError::BadSubject);
        }
        let mut seen: Vec<&str> = Vec::with_capacity(dests.len());
        let mut totals: Vec<(&str, u8)> = Vec::new();
        let mut main = Vec::new();
        let mut scoped: Vec<(String, Vec<Weighted>)> = Vec::new();
        for d in dests {
            if seen.contains(&d.subject.as_str()) {
                return Err(MappingError::Duplicate(d.subject.clone()));
            }
            seen.push(&d.subject);
            if d.weight > WEIGHT_TOTAL_MAX {
                return Err(MappingError::IndividualWeight);
            }
            let at = totals
                .iter()
                .position(|(c, _)| *c == d.cluster)
                .unwrap_or_else(|| {
                    totals.push((&d.cluster, 0));
                    totals.len() - 1
                });
            let total = totals.get_mut(at).map_or(u8::MAX, |(_, t)| {
                *t = t.saturating_add(d.weight);
                *t
            });
            if total > WEIGHT_TOTAL_MAX {
                return Err(MappingError::TotalWeight);
            }
            crate::mapping::validate_mapping(source, &d.subject)?;
            let transform = SubjectTransform::mapping(source, &d.subject)?
                .ok_or(MappingError::Transform(TransformError::BadSubject))?;
            let weighted = Weighted {
                transform,
                dest: d.subject.clone(),
                upto: d.weight,
            };
            if d.cluster.is_empty() {
                main.push(weighted);
            } else if let Some((_, list)) = scoped.iter_mut().find(|(c, _)| *c == d.cluster) {
                list.push(weighted);
            } else {
                scoped.push((d.cluster.clone(), vec![weighted]));
            }
        }
        let source_listed = seen.contains(&source);
        let dests = cumulate(source, main, source_listed)?;
        let scoped = scoped
            .into_iter()
            .map(|(c, list)| Ok((c, cumulate(source, list, source_listed)?)))
            .collect::<Result<_, MappingError>>()?;
        Ok(Self {
            source: source.to_owned(),
            literal: !source.split('.').any(|t| t == "*" || t == ">"),
            dests,
            scoped,
        })
    }

    /// The source pattern.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether `subject` is one this mapping rewrites.
    pub fn matches(&self, subject: &[u8]) -> bool {
        if self.literal {
            return self.source.as_bytes() == subject;
        }
        self.dests
            .first()
            .or_else(|| self.scoped.first().and_then(|(_, l)| l.first()))
            .is_some_and(|d| d.transform.matches(subject))
    }

    /// Maps `subject` (which [`Self::matches`]) on a server of `cluster` (empty for none):
    /// draws a destination by weight and writes the new subject into `out`.
    pub fn select(&self, subject: &[u8], cluster: &str, out: &mut Vec<u8>) -> Mapped {
        let dests = if self.scoped.is_empty() || cluster.is_empty() {
            &self.dests
        } else {
            self.scoped
                .iter()
                .find(|(c, _)| c == cluster)
                .map_or(&self.dests, |(_, list)| list)
        };
        let chosen = match dests.as_slice() {
            [only] if only.upto == WEIGHT_TOTAL_MAX => Some(only),
            list => {
                let draw = fastrand::u8(..WEIGHT_TOTAL_MAX);
                list.iter().find(|d| draw < d.upto)
            }
        };
        match chosen {
            Some(d) if d.transform.apply(subject, out) => Mapped::To,
            Some(_) => Mapped::Unmatched,
            None => {
                out.clear();
                Mapped::Dropped
            }
        }
    }

    /// The destinations with their cumulative weights, unscoped first (what Go's `/accountz`
    /// shows).
    pub fn destinations(&self) -> Vec<MapDest> {
        let shown = |cluster: &str, list: &[Weighted]| {
            list.iter()
                .map(|d| MapDest {
                    subject: d.dest.clone(),
                    weight: d.upto,
                    cluster: cluster.to_owned(),
                })
                .collect::<Vec<_>>()
        };
        let mut out = shown("", &self.dests);
        for (cluster, list) in &self.scoped {
            out.extend(shown(cluster, list));
        }
        out
    }
}

/// Adds the source with the weight left over (unless it is listed) and makes the weights
/// cumulative, smallest first.
fn cumulate(
    source: &str,
    mut list: Vec<Weighted>,
    source_listed: bool,
) -> Result<Vec<Weighted>, MappingError> {
    let total: u8 = list.iter().map(|d| d.upto).sum();
    if total != WEIGHT_TOTAL_MAX && !source_listed {
        // The source as a destination: its `*` tokens numbered in order.
        let dest = crate::mapping::stars_numbered(source);
        let transform = SubjectTransform::mapping(source, &dest)?
            .ok_or(MappingError::Transform(TransformError::BadSubject))?;
        // The scopes' totals were checked: at most 100.
        list.push(Weighted {
            transform,
            dest,
            upto: WEIGHT_TOTAL_MAX.saturating_sub(total),
        });
    }
    list.sort_by_key(|d| d.upto);
    let mut sum = 0u8;
    for d in &mut list {
        sum = sum.saturating_add(d.upto);
        d.upto = sum;
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dest(subject: &str, weight: u8) -> MapDest {
        MapDest {
            subject: subject.to_owned(),
            weight,
            cluster: String::new(),
        }
    }

    fn map_once(m: &WeightedMapping, subject: &str) -> (Mapped, String) {
        let mut out = Vec::new();
        let r = m.select(subject.as_bytes(), "", &mut out);
        (r, String::from_utf8(out).unwrap())
    }

    #[test]
    fn weighted_mapping_simple_and_wildcards() {
        let m = WeightedMapping::new("foo", &[dest("bar", 100)]).unwrap();
        assert!(m.matches(b"foo"));
        assert!(!m.matches(b"foo.x"));
        assert_eq!(map_once(&m, "foo"), (Mapped::To, "bar".to_owned()));
        let m = WeightedMapping::new("a.*.*", &[dest("b.$2.{{wildcard(1)}}", 100)]).unwrap();
        assert!(m.matches(b"a.x.y"));
        assert_eq!(map_once(&m, "a.x.y"), (Mapped::To, "b.y.x".to_owned()));
    }

    #[test]
    fn weighted_mapping_remainder_keeps_the_source() {
        let m = WeightedMapping::new("s.*", &[dest("d.$1", 20)]).unwrap();
        assert_eq!(
            m.destinations(),
            vec![dest("d.$1", 20), dest("s.$1", 100)],
            "smallest first, cumulative"
        );
        let m = WeightedMapping::new("s", &[dest("d", 0)]).unwrap();
        assert_eq!(map_once(&m, "s"), (Mapped::To, "s".to_owned()));
        // The source listed: the remainder is dropped.
        let m = WeightedMapping::new("s", &[dest("s", 0)]).unwrap();
        assert_eq!(map_once(&m, "s").0, Mapped::Dropped);
    }

    #[test]
    fn weighted_mapping_errors_worded_like_go() {
        let err = |src: &str, dests: &[MapDest]| {
            WeightedMapping::new(src, dests).err().unwrap().to_string()
        };
        assert_eq!(err("a..b", &[dest("x", 100)]), "invalid subject");
        assert_eq!(
            err("a", &[dest("x", 50), dest("x", 50)]),
            "duplicate entry for \"x\""
        );
        assert_eq!(
            err("a", &[dest("x", 101)]),
            "individual weights need to be <= 100"
        );
        assert_eq!(
            err("a", &[dest("x", 60), dest("y", 50)]),
            "total weight needs to be <= 100"
        );
        assert_eq!(
            err("a.*", &[dest("x.$2", 100)]),
            "invalid mapping destination: wildcard index out of range in $2: [2]"
        );
        let mut scoped = dest("y", 100);
        scoped.cluster = "c1".to_owned();
        assert!(WeightedMapping::new("a", &[dest("x", 100), scoped]).is_ok());
    }

    #[test]
    fn weighted_mapping_cluster_scope_chosen_by_name() {
        let mut scoped = dest("y", 100);
        scoped.cluster = "c1".to_owned();
        let m = WeightedMapping::new("a", &[dest("x", 100), scoped]).unwrap();
        let mut out = Vec::new();
        assert_eq!(m.select(b"a", "c1", &mut out), Mapped::To);
        assert_eq!(out, b"y");
        assert_eq!(m.select(b"a", "c2", &mut out), Mapped::To);
        assert_eq!(out, b"x");
        assert_eq!(m.select(b"a", "", &mut out), Mapped::To);
        assert_eq!(out, b"x");
    }
}
