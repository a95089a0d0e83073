"""check_docs.py on small temporary trees: a clean tree passes; a broken
link, a bad anchor, an orphan page or a long README each fail it.
Run from scripts/: `python3 -m unittest -q test_check_docs`."""

import contextlib
import io
import os
import pathlib
import tempfile
import textwrap
import unittest

import check_docs


class Tree(unittest.TestCase):
    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.root = pathlib.Path(d.name)
        self.write("README.md", """\
            # demo

            See the [guide](docs/guide/run.md), [its steps](docs/guide/run.md#step-two),
            the [results](docs/results/README.md) and [contributing](CONTRIBUTING.md#tests).

            ![a picture](docs/shot.png)
            """)
        self.write("CONTRIBUTING.md", """\
            # Contributing

            ## Tests

            Run them. Back to the [readme](README.md#demo).
            """)
        self.write("docs/shot.png", "")
        self.write("docs/guide/run.md", """\
            # Run

            ## Step one

            ## Step two

            ## Step one

            Again: [the second step one](#step-one-1), [a picture](../shot.png),
            [a folder](../results/).

            ```sh
            [not a link](nowhere.md) inside a code block
            ```

            A `[code span](nowhere.md)` is not a link either.
            """)
        self.write("docs/results/README.md", """\
            # Results

            - [2026-01-01](2026-01-01-run.md): `make run`, with its host.
            """)
        self.write("docs/results/2026-01-01-run.md", """\
            # A run (2026-01-01)

            Host: this one. How: [the guide](../guide/run.md#step-one).
            """)

    def write(self, rel, text):
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")

    def problems(self):
        return [f"{f}:{line}: {m}" for f, line, m in check_docs.check(str(self.root))]

    def exit_code(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = check_docs.main(["check_docs.py", str(self.root)])
        return code, out.getvalue()

    def test_a_clean_tree_passes(self):
        self.assertEqual(self.problems(), [])
        code, out = self.exit_code()
        self.assertEqual(code, 0)
        self.assertIn("docs ok", out)

    def test_a_broken_link_fails(self):
        self.write("docs/guide/run.md", "# Run\n\nSee [this](missing.md).\n")
        (problem,) = [p for p in self.problems() if "missing.md" in p]
        self.assertTrue(problem.startswith("docs/guide/run.md:3: "), problem)
        code, out = self.exit_code()
        self.assertEqual(code, 1)
        self.assertIn("docs/guide/missing.md does not exist", out)

    def test_a_broken_image_fails(self):
        self.write("README.md", "# demo\n\n![gone](docs/gone.png)\n"
                   "[g](docs/guide/run.md) [r](docs/results/README.md)\n")
        self.assertTrue(any("docs/gone.png does not exist" in p for p in self.problems()))

    def test_a_bad_anchor_fails(self):
        self.write("CONTRIBUTING.md", "# Contributing\n\n## Testing\n")
        (problem,) = self.problems()
        self.assertIn("README.md:4: link CONTRIBUTING.md#tests: no heading #tests", problem)
        self.assertEqual(self.exit_code()[0], 1)

    def test_a_bad_anchor_in_the_same_file_fails(self):
        self.write("docs/results/2026-01-01-run.md", "# A run\n\nSee [below](#the-figures).\n")
        self.assertEqual(self.problems(),
                         ["docs/results/2026-01-01-run.md:3: link #the-figures: "
                          "no heading #the-figures in docs/results/2026-01-01-run.md"])

    def test_a_duplicate_heading_is_numbered_only_as_github_numbers_it(self):
        self.write("docs/results/2026-01-01-run.md",
                   "# A run\n\n[third](../guide/run.md#step-one-2)\n")
        self.assertEqual(len(self.problems()), 1)

    def test_an_orphan_doc_fails(self):
        self.write("docs/orphan.md", "# Nobody links here\n\n[home](../README.md)\n")
        self.assertEqual(self.problems(), ["docs/orphan.md:0: not reachable by links from README.md"])
        code, out = self.exit_code()
        self.assertEqual((code, out), (1, "docs/orphan.md: not reachable by links from README.md\n"))

    def test_a_doc_reached_only_through_another_doc_is_reachable(self):
        self.write("docs/deep.md", "# Deep\n")
        self.write("docs/results/2026-01-01-run.md", "# A run\n\n[deeper](../deep.md)\n")
        self.assertEqual(self.problems(), [])

    def test_a_long_readme_fails(self):
        text = (self.root / "README.md").read_text(encoding="utf-8")
        (self.root / "README.md").write_text(text + "line\n" * 300, encoding="utf-8")
        (problem,) = self.problems()
        self.assertIn("README.md", problem)
        self.assertIn("more than 300", problem)
        self.assertEqual(self.exit_code()[0], 1)

    def test_a_readme_of_exactly_300_lines_passes(self):
        text = (self.root / "README.md").read_text(encoding="utf-8")
        count = len(text.splitlines())
        (self.root / "README.md").write_text(text + "x\n" * (300 - count), encoding="utf-8")
        self.assertEqual(self.problems(), [])

    def test_a_link_out_of_the_repository_fails(self):
        self.write("docs/results/2026-01-01-run.md", "# A run\n\n[up](../../../etc/passwd)\n")
        self.assertTrue(any("leaves the repository" in p for p in self.problems()))

    def test_urls_with_a_scheme_are_not_checked(self):
        self.write("docs/results/2026-01-01-run.md",
                   "# A run\n\n[web](https://example.com/x.md#nope) <mailto:a@b.c>\n")
        self.assertEqual(self.problems(), [])


class Slugs(unittest.TestCase):
    def test_githubs_rule(self):
        cases = {
            "`netbench run`: the whole matrix, hands-off": "netbench-run-the-whole-matrix-hands-off",
            "100,000 connections, source addresses, and several machines":
                "100000-connections-source-addresses-and-several-machines",
            "Two kernel interfaces: `--io epoll|uring|auto`": "two-kernel-interfaces---io-epolluringauto",
            "snake_case and [a link](x.md)": "snake_case-and-a-link",
        }
        for heading, slug in cases.items():
            self.assertEqual(check_docs.slug(check_docs.heading_text(heading)), slug)

    def test_closing_hashes_and_duplicates(self):
        found = check_docs.anchors("# A #\n\n## A\n\n```\n# A\n```\n\n### A ##\n")
        self.assertEqual(found, {"a", "a-1", "a-2"})


if __name__ == "__main__":
    os.chdir(os.path.dirname(os.path.abspath(__file__)))
    unittest.main()
