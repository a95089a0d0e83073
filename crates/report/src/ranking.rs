//! Who leads a row of the table, honestly: a server is marked the leader only
//! when it is significantly ahead of every other (Welch's 95% interval of the
//! ratio to it lies wholly below 1); otherwise the servers that cannot be
//! told apart from the top are marked tied. With few repetitions that is
//! often several: the mark says what the data can carry, no more.

use crate::significance::welch_change_ci;
use crate::stats::summarize;

/// How a server stands in its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Standing {
    /// Significantly ahead of every other server in the row.
    Leader,
    /// Among the servers that cannot be told apart from the top one.
    Tied,
    /// Significantly behind the top one, or not measured.
    #[default]
    Behind,
}

/// The standing of each server of a row, given each one's repetitions (its
/// requests/s; `None` or empty where it has none). Higher is better.
pub fn rank_row(row: &[Option<&[f64]>]) -> Vec<Standing> {
    let median = |v: &[f64]| summarize(v).map(|s| s.median);
    let top = row
        .iter()
        .enumerate()
        .filter_map(|(i, v)| Some((i, median(v.filter(|v| !v.is_empty())?)?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i);
    let Some(top) = top else {
        return vec![Standing::Behind; row.len()];
    };
    let top_values = row[top].unwrap_or(&[]);
    // Behind when the interval of (other / top − 1) lies wholly below zero.
    let behind = |v: &[f64]| welch_change_ci(top_values, v).is_some_and(|(_, hi)| hi < 0.0);
    let tied: Vec<bool> = row
        .iter()
        .enumerate()
        .map(|(i, v)| match v.filter(|v| !v.is_empty()) {
            None => false,
            Some(_) if i == top => true,
            Some(v) => !behind(v),
        })
        .collect();
    let alone = tied.iter().filter(|&&t| t).count() == 1;
    tied.iter()
        .map(|&t| match (t, alone) {
            (true, true) => Standing::Leader,
            (true, false) => Standing::Tied,
            (false, _) => Standing::Behind,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Standing::*;

    #[test]
    fn a_clear_leader_is_marked_alone() {
        let a = [200.0, 201.0, 199.0, 200.5];
        let b = [100.0, 101.0, 99.0, 100.5];
        assert_eq!(rank_row(&[Some(&b), Some(&a)]), [Behind, Leader]);
    }

    #[test]
    fn overlapping_leaders_are_tied() {
        // 2% apart with 10% noise: nothing can be told apart.
        let a = [100.0, 110.0, 90.0];
        let b = [102.0, 112.0, 92.0];
        let c = [50.0, 51.0, 49.0];
        assert_eq!(
            rank_row(&[Some(&a), Some(&b), Some(&c)]),
            [Tied, Tied, Behind]
        );
    }

    #[test]
    fn one_repetition_cannot_lead() {
        // The top has no interval: nothing is shown to be behind it.
        let a = [300.0];
        let b = [100.0, 101.0];
        assert_eq!(rank_row(&[Some(&a), Some(&b)]), [Tied, Tied]);
        assert_eq!(rank_row(&[Some(&a), None]), [Leader, Behind]);
    }

    #[test]
    fn an_empty_row_has_no_leader() {
        assert_eq!(rank_row(&[None, Some(&[])]), [Behind, Behind]);
        assert_eq!(rank_row(&[]), Vec::<Standing>::new());
    }
}
