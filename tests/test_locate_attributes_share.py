"""Attributes written above a cited item do not decide whether it is found (`carried`'s
minor tokens): the item's own tokens do. A `pub use` under a `#[cfg(..)]` and a
`#[cfg_attr(docsrs, ..)]` that was dropped is changed, not missing, though the attribute's
punctuation was most of the cited tokens; the item rewritten under kept attributes is gone."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.support import check_results
from watcher.gitbuild import Upstream

TRANSPORT = """\
pub mod service;

#[cfg(feature = "transport-io")]
#[cfg_attr(docsrs, doc(cfg(feature = "transport-io")))]
pub mod io;
#[cfg(feature = "transport-io")]
#[cfg_attr(docsrs, doc(cfg(feature = "transport-io")))]
pub use io::stdio;

#[cfg(feature = "auth")]
pub mod auth;
"""

PLAIN = TRANSPORT.replace('#[cfg_attr(docsrs, doc(cfg(feature = "transport-io")))]\n', "")


def test_an_item_whose_attribute_was_dropped_is_changed_not_missing(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("transports", {"src/transport.rs": TRANSPORT})
    project.note("n", f"{base} src/transport.rs:6-8")
    dropped = upstream.commit("remove unnecessary doc-cfg (#61)", {"src/transport.rs": PLAIN})
    upstream.commit("auth", {"src/transport.rs": PLAIN + "pub use auth::AuthClient;\n"})

    result = check_results(project, capsys)["n:src/transport.rs:6-8"]

    assert result["verdict"] == "changed", result["message"]
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (5, 6)
    assert result["introduced_by"]["commit"] == dropped
    assert [h["commit"] for h in result["history"]] == [dropped]


def test_an_item_rewritten_under_its_attributes_is_missing(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("transports", {"src/transport.rs": TRANSPORT})
    project.note("n", f"{base} src/transport.rs:6-8")
    gone = upstream.commit(
        "stdio moves to the io module's own prelude (#62)",
        {"src/transport.rs": TRANSPORT.replace("pub use io::stdio;", "pub mod prelude;")},
    )

    result = check_results(project, capsys)["n:src/transport.rs:6-8"]

    assert result["verdict"] == "missing", result["message"]
    assert result["introduced_by"]["commit"] == gone


CONFIG = """\
use std::time::Duration;

#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    pub url: String,
    pub timeout: Duration,
}
"""


def test_a_definition_cited_whole_with_an_attribute_dropped_is_changed(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("config", {"src/config.rs": CONFIG})
    project.note("n", f"{base} src/config.rs:3-8")
    dropped = upstream.commit(
        "config: exhaustive (#63)", {"src/config.rs": CONFIG.replace("#[non_exhaustive]\n", "")}
    )

    result = check_results(project, capsys)["n:src/config.rs:3-8"]

    assert result["verdict"] == "changed", result["message"]
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (3, 7)
    assert [h["commit"] for h in result["history"]] == [dropped]
