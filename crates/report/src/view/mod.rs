//! The writers of sections built as data (`crate::model::section`): one
//! per format, each a loop over a section's notes, tables and metrics that
//! knows nothing of which section it writes. They import the model; the
//! model never imports them.

pub(crate) mod csv;
pub(crate) mod html;
pub(crate) mod markdown;
pub(crate) mod terminal;
