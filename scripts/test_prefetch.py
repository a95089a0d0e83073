"""prefetch.py's choices: which fetch a server folder gets, and the variables
its manifest's build command sets. Run by `make test`."""

import os
import pathlib
import tempfile
import unittest

import prefetch


class BuildEnv(unittest.TestCase):
    def test_variables_in_front_of_the_command(self):
        env = prefetch.build_env("JAVA_HOME=/usr/lib/jvm/x A_B=1 mvn -q X=2 package")
        self.assertEqual(env, {"JAVA_HOME": "/usr/lib/jvm/x", "A_B": "1"})

    def test_none_when_the_command_comes_first(self):
        self.assertEqual(prefetch.build_env("cargo build --release"), {})
        self.assertEqual(prefetch.build_env(""), {})

    def test_quoting_is_undone_and_bad_quoting_gives_nothing(self):
        self.assertEqual(prefetch.build_env("X='a b' make"), {"X": "a b"})
        self.assertEqual(prefetch.build_env("X='a make"), {})

    def test_an_argument_with_an_equals_sign_is_not_a_variable(self):
        self.assertEqual(prefetch.build_env("--flag=1 make"), {})


class Fetches(unittest.TestCase):
    def folder_with(self, *names):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        for n in names:
            (pathlib.Path(d.name) / n).write_text("")
        return pathlib.Path(d.name)

    def test_each_toolchain_by_its_files(self):
        self.assertEqual(
            prefetch.fetches(self.folder_with("Cargo.toml", "Cargo.lock")),
            ([["cargo", "fetch", "--locked"]], []),
        )
        downloads, compiles = prefetch.fetches(self.folder_with("go.mod", "go.sum"))
        self.assertEqual(downloads, [["go", "mod", "download"]])
        self.assertEqual(compiles, [["go", "build", "-o", os.devnull, "."]])
        (mvn,), compiles = prefetch.fetches(self.folder_with("pom.xml"))
        self.assertEqual(mvn[0], "mvn")
        self.assertTrue(mvn[-1].endswith(":go-offline"), mvn)
        self.assertEqual(compiles, [])

    def test_an_unlocked_cargo_project_and_other_tools_are_left_to_the_build(self):
        for files in [("Cargo.toml",), ("package.json", "package-lock.json"), ("Makefile",)]:
            self.assertEqual(prefetch.fetches(self.folder_with(*files)), ([], []), files)

    def test_the_digest_follows_the_dependency_files_only(self):
        folder = self.folder_with("go.mod", "main.go")
        first = prefetch.dependency_digest(folder)
        (folder / "main.go").write_text("package main")
        self.assertEqual(prefetch.dependency_digest(folder), first)
        (folder / "go.mod").write_text("module x")
        changed = prefetch.dependency_digest(folder)
        self.assertNotEqual(changed, first)
        (folder / "go.sum").write_text("")
        self.assertNotEqual(prefetch.dependency_digest(folder), changed)

    def test_a_missing_tool_is_reported_not_raised(self):
        problem = prefetch.run(self.folder_with(), [["netbench-no-such-tool", "x"]], {})
        self.assertEqual(problem, "netbench-no-such-tool not found")

    def test_a_failing_command_is_reported_with_its_output(self):
        problem = prefetch.run(
            self.folder_with(), [["sh", "-c", "echo broken >&2; exit 3"]], {"X": "1"}
        )
        self.assertIn("exited 3", problem)
        self.assertIn("broken", problem)

    def test_the_build_variables_reach_the_command(self):
        problem = prefetch.run(
            self.folder_with(), [["sh", "-c", 'test "$NETBENCH_PREFETCH_T" = yes']],
            {"NETBENCH_PREFETCH_T": "yes"},
        )
        self.assertIsNone(problem)


if __name__ == "__main__":
    unittest.main()
