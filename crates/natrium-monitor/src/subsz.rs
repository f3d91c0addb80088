//! `/subsz` (alias `/subscriptionsz`): subscription index statistics and, with `subs=1`, the
//! subscriptions themselves, filtered by `test` (a literal subject they must match) and paged
//! with `offset` and `limit` as Go does. Statistics add up every account's index, or cover
//! the one `acc=` names (all zero for an unknown account, as in Go).

use natrium_core::closed::SubSnapshot;
use natrium_core::Server;
use serde::Serialize;

use crate::connz::CONNZ_DEFAULT_LIMIT;
use crate::query::{Query, QueryError};
use crate::varz::rfc3339;

/// Go's `SubDetail` as `/subsz` reports it (with the account).
#[derive(Serialize)]
pub struct SubEntry {
    account: String,
    account_tag: String,
    subject: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    qgroup: Option<String>,
    sid: String,
    msgs: u64,
    #[serde(skip_serializing_if = "is_zero")]
    max: u64,
    cid: u64,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(v: &u64) -> bool {
    *v == 0
}

#[derive(Serialize)]
pub struct Subsz {
    server_id: String,
    now: String,
    num_subscriptions: u64,
    num_cache: u64,
    num_inserts: u64,
    num_removes: u64,
    num_matches: u64,
    #[serde(serialize_with = "crate::varz::go_float")]
    cache_hit_rate: f64,
    max_fanout: u64,
    #[serde(serialize_with = "crate::varz::go_float")]
    avg_fanout: f64,
    total: usize,
    offset: usize,
    limit: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    subscriptions_list: Vec<SubEntry>,
}

pub struct SubszOptions {
    subs: bool,
    offset: usize,
    limit: usize,
    test: Option<String>,
    account: Option<String>,
}

impl SubszOptions {
    pub fn parse(q: &Query) -> Result<Self, QueryError> {
        let subs = q.bool("subs")?;
        let offset = usize::try_from(q.int("offset")?).unwrap_or(0);
        let limit = usize::try_from(q.int("limit")?)
            .ok()
            .filter(|l| *l > 0)
            .unwrap_or(CONNZ_DEFAULT_LIMIT);
        let test = q.get("test").filter(|t| !t.is_empty());
        if let Some(t) = &test {
            let valid = nats_subject::is_valid_publish_subject(t.as_bytes());
            if !valid {
                return Err(QueryError(format!(
                    "invalid test subject, must be valid publish subject: {t}"
                )));
            }
        }
        Ok(Self {
            subs,
            offset,
            limit,
            test,
            account: q.get("acc").filter(|a| !a.is_empty()),
        })
    }
}

pub fn subsz(server: &Server, opts: &SubszOptions) -> Subsz {
    let in_scope = |name: &str| opts.account.as_deref().is_none_or(|a| a == name);
    let mut stats = nats_subject::SublistStats::default();
    for account in server.accounts().iter().filter(|a| in_scope(&a.name)) {
        stats.merge(&account.sublist.stats());
    }
    let mut list = Vec::new();
    let mut total = 0;
    if opts.subs {
        // From the indexes, as Go lists them: the server's internal subscriptions too.
        let mut all: Vec<SubEntry> = Vec::new();
        for account in server.accounts().iter().filter(|a| in_scope(&a.name)) {
            for sub in account.sublist.all() {
                let keep = opts
                    .test
                    .as_ref()
                    .is_none_or(|t| nats_subject::subject_matches(&sub.subject, t.as_bytes()));
                if keep {
                    let s = SubSnapshot::of(&sub);
                    all.push(SubEntry {
                        account: account.name.clone(),
                        account_tag: account.name.clone(),
                        subject: s.subject,
                        qgroup: s.queue,
                        sid: s.sid,
                        msgs: s.msgs,
                        max: s.max,
                        cid: sub.endpoint.cid(),
                    });
                }
            }
        }
        // A stable order for paging: by connection, then sid as a number where it is one.
        all.sort_by(|a, b| {
            (a.cid, a.sid.len(), &a.sid, &a.account).cmp(&(b.cid, b.sid.len(), &b.sid, &b.account))
        });
        total = all.len();
        let first = opts.offset.min(total);
        list = all.into_iter().skip(first).take(opts.limit).collect();
    }
    Subsz {
        server_id: server.id().to_owned(),
        now: rfc3339(chrono::Utc::now()),
        num_subscriptions: stats.num_subs,
        num_cache: stats.num_cache,
        num_inserts: stats.num_inserts,
        num_removes: stats.num_removes,
        num_matches: stats.num_matches,
        cache_hit_rate: stats.cache_hit_rate,
        max_fanout: stats.max_fanout,
        avg_fanout: stats.avg_fanout,
        total,
        offset: opts.offset,
        limit: opts.limit,
        subscriptions_list: list,
    }
}
