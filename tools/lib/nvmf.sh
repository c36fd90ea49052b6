# shellcheck shell=bash
# tools/lib/nvmf.sh - shell helpers shared by the NVMe-oF benchmarks
# (bench/nvmf/) and the fault suite (tests/faults/nvmf.sh), sourced, not
# run: finding wharf-nvmf-tgt, the guest's
# kernel modules and backing devices, an nvmet-rdma subsystem through
# configfs, and starting wharf-nvmf-tgt. The caller sets `prog` (the
# prefix of its messages) before sourcing.

nvmf_log() { echo "${prog:-nvmf}: $*" >&2; }

# The median of the numbers on stdin (one per line).
nvmf_median() {
	sort -g | awk '{v[NR] = $1} END {
		if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# wharf-nvmf-perf's --json line on stdin -> "IOPS AVG_US P99_US".
nvmf_perf_iops_lat() {
	sed -e 's/.*"iops":\([0-9.]*\).*"avg":\([0-9.]*\),"p50":[0-9.]*,"p99":\([0-9.]*\).*/\1 \2 \3/'
}

nvmf_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
nvmf_addr=198.18.0.1
nvmf_cfs=/sys/kernel/config/nvmet

# Sets tgt (wharf-nvmf-tgt) unless set: the -c opt build, else bazel-bin.
# Exits (status 2) unless it is executable and we are in the guest.
nvmf_find_tgt() {
	if [ -z "${tgt:-}" ]; then
		tgt=$nvmf_top/bazel-out/k8-opt/bin/targets/nvmf/wharf-nvmf-tgt
		[ -x "$tgt" ] || tgt=$nvmf_top/bazel-bin/targets/nvmf/wharf-nvmf-tgt
	fi
	[ -x "$tgt" ] || {
		nvmf_log "build //targets/nvmf:wharf-nvmf-tgt first"
		exit 2
	}
	[ "${WHARF_GUEST:-}" = 1 ] || {
		nvmf_log "run me in the guest: ./wharf vm -- $0"
		exit 2
	}
}

# The host and target modules, configfs, and the kernel target's backing:
# $1 ram (brd /dev/ram0, 64 MiB) or null (null_blk /dev/nullb0: 1 GiB,
# its smallest module-parameter size; irqmode 0 completes in the
# submitter's context, the cheapest setting for nvmet).
nvmf_modules() {
	modprobe -a nvme_rdma nvme_fabrics nvmet nvmet_rdma
	if [ "$1" = ram ]; then
		[ -b /dev/ram0 ] || modprobe brd rd_nr=1 rd_size=65536
	else
		[ -b /dev/nullb0 ] || modprobe null_blk nr_devices=1 gb=1 irqmode=0
	fi
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
}

# nvmet-rdma: subsystem NQN (any host allowed) with namespace 1 on DEVICE
# (a block device: nvmet's bio path; a regular file: its file path, with
# buffered_io BUFFERED, 0 by default), exported on configfs port PORTID at
# $nvmf_addr:PORT.
nvmet_setup() { # nqn device port portid [buffered]
	local s=$nvmf_cfs/subsystems/$1 p=$nvmf_cfs/ports/$4
	mkdir "$s"
	echo 1 >"$s/attr_allow_any_host"
	mkdir "$s/namespaces/1"
	echo -n "$2" >"$s/namespaces/1/device_path"
	[ -z "${5:-}" ] || echo "$5" >"$s/namespaces/1/buffered_io"
	echo 1 >"$s/namespaces/1/enable"
	mkdir "$p"
	echo rdma >"$p/addr_trtype"
	echo ipv4 >"$p/addr_adrfam"
	echo $nvmf_addr >"$p/addr_traddr"
	echo "$3" >"$p/addr_trsvcid"
	ln -s "$s" "$p/subsystems/$1"
}

# Undoes nvmet_setup (whatever part of it exists); never fails.
nvmet_teardown() { # nqn portid
	local s=$nvmf_cfs/subsystems/$1 p=$nvmf_cfs/ports/$2
	if [ -d "$p" ]; then
		rm -f "$p/subsystems/$1"
		rmdir "$p"
	fi
	if [ -d "$s" ]; then
		[ -d "$s/namespaces/1" ] && echo 0 >"$s/namespaces/1/enable"
		rmdir "$s/namespaces/1" 2>/dev/null
		rmdir "$s"
	fi
	return 0
}

# The namespace's block device once the kernel host connected to NQN.
nvmf_dev_of() { # nqn
	local c n
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$1" ] || continue
		for n in "$c"/nvme*n*; do
			n=$(basename "$n")
			# nvmeAcBnC (native multipath path) -> nvmeAnC
			echo "/dev/$(echo "$n" | sed 's/c[0-9]*n/n/')"
			return 0
		done
	done
	return 1
}

# The kernel host (nvme-rdma, one I/O queue, host NQN HOSTNQN) on NQN at
# $nvmf_addr:PORT; prints the namespace's block device.
nvmf_kconnect() { # nqn port hostnqn
	local d
	nvme connect -t rdma -a "$nvmf_addr" -s "$2" -n "$1" -i 1 \
		--hostnqn="$3" >/dev/null || return 1
	for _ in $(seq 1 200); do
		d=$(nvmf_dev_of "$1" || true)
		[ -n "$d" ] && [ -b "$d" ] && {
			echo "$d"
			return 0
		}
		sleep 0.1
	done
	return 1
}

# fio RW at QD on DEV for RUNTIME seconds (2 s ramp), on CPU
# $nvmf_fio_cpu (default 1), io_uring, O_DIRECT, blocks of $nvmf_fio_bs
# (default 4k) over the first $nvmf_fio_size (default 64M), scratch files
# in WORK -> "IOPS AVG_US P99_US" (terse v3: read IOPS in field 8, total
# latency mean 40, clat percentiles 18-37; write 49, 81, 59-78; latencies
# in us).
nvmf_fio() { # dev rw qd runtime work
	local w=0
	case $2 in *write) w=1 ;; esac
	taskset -c "${nvmf_fio_cpu:-1}" fio --name=b --filename="$1" --ioengine=io_uring \
		--direct=1 --bs="${nvmf_fio_bs:-4k}" --rw="$2" --iodepth="$3" \
		--numjobs=1 --size="${nvmf_fio_size:-64M}" --time_based \
		--runtime="$4" --ramp_time=2 \
		--output-format=terse --terse-version=3 >"$5/fio" \
		2>"$5/fio.err" || {
		cat "$5/fio.err" >&2
		return 1
	}
	awk -F';' -v w=$w '{
		iops = w ? $49 : $8; avg = w ? $81 : $40
		for (i = (w ? 59 : 18); i <= (w ? 78 : 37); i++)
			if ($i ~ /^99\.000000%=/) { sub(/.*=/, "", $i); p = $i }
		print iops, avg, p
	}' "$5/fio"
}

# wharf-nvmf-perf PERF (one I/O queue, its shard on CPU, idle shards
# POLL) at $nvmf_addr:PORT on NQN, 4k RW at QD for RUNTIME seconds, JSON
# and errors in WORK -> "IOPS AVG_US P99_US".
nvmf_perf_run() { # perf nqn port rw qd runtime cpu poll work
	"$1" --traddr "$nvmf_addr" --trsvcid "$3" --subnqn "$2" --queues 1 \
		--cpus "$7" --poll "$8" --qd "$5" --io-size 4k --pattern "$4" \
		--time "$6" --json --quiet >"$9/perf" 2>"$9/perf.err" || {
		cat "$9/perf.err" "$9/perf" >&2
		return 1
	}
	awk '{
		for (i = 1; i <= split($0, kv, ","); i++) {
			n = split(kv[i], p, ":"); k = p[n - 1]; gsub(/[{"]/, "", k)
			v[k] = p[n]
		}
		print v["iops"], v["avg"], v["p99"]
	}' "$9/perf"
}

# Starts TGT ARGS... in the background with stdout and stderr in LOG, sets
# tgt_pid and waits (10 s at most) for "listening on"; returns 1 with the
# log on stderr if the target does not get there.
nvmf_tgt_start() { # log tgt args...
	local log=$1
	shift
	# Emptied before the start, not by the background job's redirection
	# alone: until that runs, the grep below would read a previous
	# start's "listening on" (a restart under the same log).
	: >"$log"
	"$@" >"$log" 2>&1 &
	# shellcheck disable=SC2034 # the caller's
	tgt_pid=$!
	for _ in $(seq 1 100); do
		grep -q "listening on" "$log" && return 0
		sleep 0.1
	done
	nvmf_log "wharf-nvmf-tgt did not start:"
	cat "$log" >&2
	return 1
}
