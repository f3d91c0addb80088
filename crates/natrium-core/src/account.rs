//! An account: one subject namespace with its own subscription index. Clients log into one
//! account and never see another's messages, except through the exports and imports
//! configured between accounts.
//!
//! Layout:
//! - [`Account`] (`namespace`): the index, the account's definition, its traffic counters and the
//!   links to other accounts.
//! - [`registry`]: every account of the server, built from the configuration, with `$G` and
//!   the system account; it resolves imports into [`links`].
//! - [`links`]: what a publish in an account must also do elsewhere — forward to the
//!   accounts importing its streams, forward requests to the accounts whose services it
//!   imports, route responses back.
//! - [`responses`]: the bounded, expiring table of reply subjects handed to an exporting
//!   account's responders (`_R_.…`) and where each response goes.
//! - [`mappings`]: the account's subject mappings, applied to what its clients publish.
//! - [`stats`]: per-account counters for `/accstatz`.
//! - `expiry`: closes the clients of an account whose JWT expired.
//! - [`interest`]: listeners told when interest in a subject appears or goes; every
//!   subscription change goes through [`Account::subscribe`] and [`Account::unsubscribe`].
//!
//! An account with no imports or exports in use has no links: publishing in it costs one
//! atomic load more than before accounts existed.
//!
//! A configuration reload keeps every account whose name is still configured (its index,
//! counters and response table with it) and replaces its definition and links whole, see
//! [`AccountState`]; publishes in flight finish with the state they loaded.

pub(crate) mod expiry;
pub mod interest;
pub mod links;
pub mod mappings;
pub mod names;
mod namespace;
pub mod registry;
pub mod responses;
pub mod stats;

pub use interest::InterestListener;
pub use links::Links;
pub use names::{GLOBAL_ACCOUNT, SYSTEM_ACCOUNT};
pub use namespace::{Account, AccountState, LinksRef, SubRef};
pub use registry::Accounts;
pub use stats::AccountStats;
