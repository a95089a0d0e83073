//! The report's sections built as data, one file each; [`LIST`] is their
//! order on every page and in every format. A new section is one file here
//! with a `section(&Report) -> Option<Section>` (None when the run has
//! nothing for it) and one line in [`LIST`]; every view writes it.

mod conformance;
mod placements;
mod ranking;
mod resident;

use super::section::Section;
use super::Report;

/// Every section builder, in the order the views write them.
const LIST: &[fn(&Report) -> Option<Section>] = &[
    ranking::section,
    placements::section,
    resident::section,
    conformance::section,
];

/// The run's sections, in [`LIST`]'s order, those it has nothing for left
/// out.
pub(crate) fn build(r: &Report) -> Vec<Section> {
    LIST.iter().filter_map(|build| build(r)).collect()
}
