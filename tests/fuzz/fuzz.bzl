"""One fuzz target: its entry point as a library, a binary and a replay test.

wharf_fuzz(name, deps) expects NAME.c (LLVMFuzzerTestOneInput),
NAME_replay_test.cc and corpus/NAME/. It defines
- NAME_target: the entry point (alwayslink, so the binary keeps it);
- NAME: libFuzzer under --config=fuzz, else a plain program (fuzz_main.c)
  that runs the files named on its command line;
- NAME_replay_test: the corpus, its mutations and pseudo-random inputs
  through the same entry point, in the normal suite.
"""

def wharf_fuzz(name, deps):
    native.cc_library(
        name = name + "_target",
        srcs = [name + ".c"],
        alwayslink = True,
        deps = deps + [":fuzz_check"],
    )
    native.cc_binary(
        name = name,
        srcs = select({
            ":fuzzing": [],
            "//conditions:default": ["fuzz_main.c"],
        }),
        linkopts = select({
            ":fuzzing": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        deps = [":" + name + "_target"],
    )
    native.cc_test(
        name = name + "_replay_test",
        size = "small",
        srcs = [name + "_replay_test.cc"],
        data = native.glob(["corpus/" + name + "/*"]),
        deps = [
            ":" + name + "_target",
            ":replay_util",
            "@system//:gtest_main",
        ],
    )
