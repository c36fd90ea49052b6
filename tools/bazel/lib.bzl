"""One archive of a library and everything of this workspace it links.

wharf's modules are separate cc_library targets (core, numa, qp, cm and
their internal pieces).  An installed library is one file: this rule
collects the static archives of every target of this workspace that the
deps link (external ones such as @system//:ibverbs carry only link flags)
and merges them with `ar -M`.  With pic = True it takes the PIC variants,
for a shared object; a name ending in .lo makes cc_binary link it whole
(--whole-archive), so that every object is in the .so, not only the ones
some other object refers to.
"""

def _wharf_archive_impl(ctx):
    archives = []
    for dep in ctx.attr.deps:
        for li in dep[CcInfo].linking_context.linker_inputs.to_list():
            if li.owner.workspace_name != "":
                continue
            for lib in li.libraries:
                if ctx.attr.pic:
                    a = lib.pic_static_library or lib.static_library
                else:
                    a = lib.static_library or lib.pic_static_library
                if a and a not in archives:
                    archives.append(a)
    out = ctx.outputs.out
    args = ctx.actions.args()
    args.add(out)
    args.add_all(archives)
    ctx.actions.run_shell(
        inputs = archives,
        outputs = [out],
        arguments = [args],
        command = """
out=$1; shift
rm -f "$out"
{ echo "create $out"; for a; do echo "addlib $a"; done
  echo save; echo end; } | ar -M
""",
        mnemonic = "WharfArchive",
        progress_message = "Merging %d archives into %s" % (len(archives), out.short_path),
    )
    return [DefaultInfo(files = depset([out]))]

wharf_archive = rule(
    implementation = _wharf_archive_impl,
    attrs = {
        "deps": attr.label_list(providers = [CcInfo]),
        "out": attr.output(mandatory = True),
        "pic": attr.bool(default = False),
    },
)

def _wharf_public_headers_impl(ctx):
    # A header with include_prefix comes twice: as written and as its
    # _virtual_includes copy; keep one per name.
    hdrs, names = [], []
    for dep in ctx.attr.deps:
        for h in dep[CcInfo].compilation_context.direct_public_headers:
            if h.basename not in names:
                names.append(h.basename)
                hdrs.append(h)
    return [DefaultInfo(files = depset(hdrs))]

# The public headers of the given libraries (their hdrs, as included:
# <wharf/X.h> through include_prefix).
wharf_public_headers = rule(
    implementation = _wharf_public_headers_impl,
    attrs = {"deps": attr.label_list(providers = [CcInfo])},
)
