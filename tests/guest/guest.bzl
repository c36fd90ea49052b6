"""guest_test: one test binary of the soft-RoCE guest suite.

guest_test(name, deps, data, linkstatic, linkopts) builds NAME.cc into a
cc_test tagged "guest" (kept out of the host's `bazel test //...`, run by
./wharf test inside the guest) with :guest_env and gtest_main; deps adds
what the test itself uses.
"""

def guest_test(name, deps = [], data = [], linkstatic = False, linkopts = []):
    native.cc_test(
        name = name,
        srcs = [name + ".cc"],
        data = data,
        linkstatic = linkstatic,
        linkopts = linkopts,
        tags = ["guest"],
        deps = [
            ":guest_env",
            "@system//:gtest_main",
        ] + [d for d in deps if d not in [":guest_env", "@system//:gtest_main"]],
    )
