//! The run-wide shift, `compare`'s control between two runs: how much the
//! median of every other server in the same row (test and connections) moved
//! from run A to run B, divided out of a cell before it is judged. On a shared VM two runs of the same
//! suite minutes apart moved every server by a few percent the same way,
//! which the CPU probe did not see and which the repetitions of one run
//! cannot show (bench/aa_check.py); the other servers of the same two runs
//! do see it. Each cell is scaled by the median change of the *other* cells,
//! so a cell's own change cannot hide itself; the price is that a change
//! common to every server (a kernel, a compiler flag used by all) is shown
//! once as the shift, not per cell.

use serde::Serialize;

use crate::kinds::median;

/// A cell is judged against the shift only when this many other cells
/// (of the same metric and row, in both runs) define it: with fewer, one odd cell
/// would move everyone's reference.
pub const MIN_OTHER_CELLS: usize = 3;

/// The shift of one metric between the runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RunShift {
    /// Median over the cells of `median(B) / median(A)`: 1.05 is every
    /// server 5% higher in B.
    pub factor: f64,
    /// The cells it was taken over.
    pub cells: usize,
}

/// The run-wide shift of `ratios` (each cell's `median(B) / median(A)`),
/// when there are enough cells to take it.
pub fn overall(ratios: &[f64]) -> Option<RunShift> {
    let logs: Vec<f64> = usable_logs(ratios.iter().copied());
    if logs.len() <= MIN_OTHER_CELLS {
        return None;
    }
    Some(RunShift {
        factor: median(logs)?.exp(),
        cells: ratios.len(),
    })
}

/// For every cell, the geometric median change of all the *other* cells
/// (None when fewer than [`MIN_OTHER_CELLS`] others have a usable ratio).
pub fn leave_one_out(ratios: &[f64]) -> Vec<Option<f64>> {
    (0..ratios.len())
        .map(|i| {
            let others = usable_logs(
                ratios
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .map(|(_, &r)| r),
            );
            let enough = others.len() >= MIN_OTHER_CELLS;
            median(others).filter(|_| enough).map(f64::exp)
        })
        .collect()
}

/// Logarithms of the ratios a shift can be taken from: finite and positive
/// (a cell with a zero median in A has no ratio).
fn usable_logs(ratios: impl Iterator<Item = f64>) -> Vec<f64> {
    ratios
        .filter(|r| r.is_finite() && *r > 0.0)
        .map(f64::ln)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn a_host_that_moved_every_server_is_one_shift() {
        // Every server 4% up in B, as the A/A pair on this VM did.
        let ratios = [1.04; 6];
        let s = overall(&ratios).unwrap();
        assert!(close(s.factor, 1.04) && s.cells == 6, "{s:?}");
        for f in leave_one_out(&ratios) {
            assert!(close(f.unwrap(), 1.04));
        }
    }

    #[test]
    fn a_cell_that_really_changed_is_not_its_own_reference() {
        // One server doubled; the rest moved 2% with the host.
        let ratios = [2.0, 1.02, 1.02, 1.02, 1.02];
        let f = leave_one_out(&ratios);
        assert!(close(f[0].unwrap(), 1.02), "{f:?}");
        // The doubled cell is one of four others for the rest: the median of
        // 1.02, 1.02, 1.02 and 2.0 stays at 1.02.
        assert!(close(f[1].unwrap(), 1.02), "{f:?}");
        // The geometric median, so a halving and a doubling weigh the same.
        let f = leave_one_out(&[1.0, 0.5, 2.0, 1.0]);
        assert!(close(f[0].unwrap(), 1.0), "{f:?}");
    }

    #[test]
    fn too_few_cells_give_no_shift() {
        assert_eq!(overall(&[1.1, 1.1, 1.1]), None);
        assert_eq!(leave_one_out(&[1.1, 1.1, 1.1]), vec![None, None, None]);
        assert!(overall(&[1.1; 4]).is_some());
        // A cell without a usable ratio neither counts nor moves the median.
        assert_eq!(
            leave_one_out(&[f64::INFINITY, 1.1, 1.1, 0.0]),
            vec![None, None, None, None]
        );
        let f = leave_one_out(&[f64::NAN, 1.1, 1.1, 1.1]);
        assert!(close(f[0].unwrap(), 1.1) && f[1].is_none(), "{f:?}");
    }
}
