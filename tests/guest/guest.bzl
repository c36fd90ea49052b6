"""guest_test: one test binary of the soft-RoCE guest suite.

guest_test(name, deps, data, linkstatic, linkopts, kernel) builds NAME.cc
into a cc_test tagged "guest" (kept out of the host's `bazel test //...`,
run by ./wharf test inside the guest) with :guest_env and gtest_main; deps
adds what the test itself uses.  kernel = "6.12": it needs the second
guest kernel (tagged "kernel612": ./wharf test runs it in a 6.12 boot of
its own after the 6.1 one).
"""

def guest_test(name, deps = [], data = [], linkstatic = False, linkopts = [], kernel = "6.1"):
    if kernel not in ["6.1", "6.12"]:
        fail("guest_test: kernel is 6.1 or 6.12, not " + kernel)
    native.cc_test(
        name = name,
        srcs = [name + ".cc"],
        data = data,
        linkstatic = linkstatic,
        linkopts = linkopts,
        tags = ["guest"] + (["kernel612"] if kernel == "6.12" else []),
        deps = [
            ":guest_env",
            "@system//:gtest_main",
        ] + [d for d in deps if d not in [":guest_env", "@system//:gtest_main"]],
    )
