//! The subscription-index counters that Go reports on `/subsz`.

/// A snapshot of one index's counters (Go's `SublistStats`). JSON names on `/subsz`:
/// `num_subscriptions`, `num_cache`, `num_inserts`, `num_removes`, `num_matches`,
/// `cache_hit_rate`, `max_fanout`, `avg_fanout`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SublistStats {
    /// Subscriptions in the index.
    pub num_subs: u64,
    /// Match results in the cache.
    pub num_cache: u64,
    /// Inserts that added a subscription.
    pub num_inserts: u64,
    /// Removes that found their subscription.
    pub num_removes: u64,
    /// Calls to `matches`.
    pub num_matches: u64,
    /// `cache_hits / num_matches`, 0 before the first match.
    pub cache_hit_rate: f64,
    /// Largest fanout (plain subscriptions plus queue groups) among cached results.
    pub max_fanout: u64,
    /// Mean fanout over cached results, 0 when the cache is empty.
    pub avg_fanout: f64,
    /// Matches answered from the cache; kept so that [`SublistStats::merge`] can recompute
    /// the rate. Not part of Go's JSON.
    pub cache_hits: u64,
    /// Sum of fanouts over cached results; kept for [`SublistStats::merge`]. Not in Go's JSON.
    pub total_fanout: u64,
}

impl SublistStats {
    /// Folds another index's counters into this one, as `/subsz` does across accounts: counts
    /// add, the maximum fanout is the larger one, and both ratios are recomputed from the sums.
    pub fn merge(&mut self, other: &Self) {
        self.num_subs += other.num_subs;
        self.num_cache += other.num_cache;
        self.num_inserts += other.num_inserts;
        self.num_removes += other.num_removes;
        self.num_matches += other.num_matches;
        self.cache_hits += other.cache_hits;
        self.total_fanout += other.total_fanout;
        self.max_fanout = self.max_fanout.max(other.max_fanout);
        self.recompute_ratios();
    }

    /// Sets `cache_hit_rate` and `avg_fanout` from the counters.
    pub(crate) fn recompute_ratios(&mut self) {
        self.cache_hit_rate = ratio(self.cache_hits, self.num_matches);
        self.avg_fanout = ratio(self.total_fanout, self.num_cache);
    }
}

fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_merge_recomputes_ratios() {
        let mut a = SublistStats {
            num_matches: 4,
            cache_hits: 1,
            num_cache: 2,
            total_fanout: 2,
            max_fanout: 1,
            ..SublistStats::default()
        };
        a.recompute_ratios();
        let mut b = SublistStats {
            num_matches: 4,
            cache_hits: 3,
            num_cache: 2,
            total_fanout: 6,
            max_fanout: 5,
            ..SublistStats::default()
        };
        b.recompute_ratios();
        a.merge(&b);
        assert!((a.cache_hit_rate - 0.5).abs() < f64::EPSILON);
        assert!((a.avg_fanout - 2.0).abs() < f64::EPSILON);
        assert_eq!(a.max_fanout, 5);
        assert!(SublistStats::default().cache_hit_rate.abs() < f64::EPSILON);
    }
}
