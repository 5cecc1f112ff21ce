#!/usr/bin/env bash
# mpi-carry.sh - build .mpi-carry/: a relocatable copy of Debian 12's Open MPI 4.1 runtime (mpirun,
# orted, libmpi.so.40 and the Open MPI / PMIx / hwloc / libevent libraries and MCA components it
# needs), so that the MPI test programs built here (linked against Debian's libmpi.so.40) also run
# under `mpirun -np 2` on a GPU machine without MPI (or with another build of it; e.g. Ubuntu 24.04),
# where the folder arrives as a git-ignored path of a copy of this repo. On that machine:
#
#   source .mpi-carry/activate.sh        # sets PATH, LD_LIBRARY_PATH, OPAL_PREFIX, PMIX_*, OMPI_MCA_*
#   mpirun -np 2 build-90/tests/test_mpi # as root too; the carried libmpi is used whatever is installed
#
# (CTest's MPI tests name the mpiexec found at configure time, /usr/bin/mpiexec, by its full path.)
#
# The copy keeps Debian's layout under .mpi-carry/usr/... (Open MPI relocates only then: OPAL_PREFIX
# must be the folder that stands for /usr). glibc, libstdc++ and libgcc_s are not copied (the target
# has newer ones). zlib and libudev (which every Ubuntu has) go into .mpi-carry/lib-fallback/, used
# only when the target lacks them. Transports for InfiniBand/UCX/libfabric/PSM and the OpenSHMEM
# components are left out (a single-node run uses the self and vader BTLs); activate.sh turns them
# off by MCA parameters. Needs Debian's libopenmpi3 and openmpi-bin (apt-get install openmpi-bin).
#
#   scripts/mpi-carry.sh          (re)build .mpi-carry/ at the repo root and print its size
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(pwd)/.mpi-carry
ML=/usr/lib/x86_64-linux-gnu             # Debian's multiarch libdir
OL=$ML/openmpi/lib                       # Open MPI's libdir; its MCA components are in $OL/openmpi3
PX=$ML/pmix2                             # PMIx 4's prefix; its components are in $PX/lib/pmix

[[ -x /usr/bin/orterun && -e $ML/libmpi.so.40 ]] || { echo "Debian's Open MPI is not installed" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"

# put FILE...: copy each file (or symlink, as a symlink) to the same path under $out
put() {
  local f
  for f; do mkdir -p "$out$(dirname "$f")"; cp -a "$f" "$out$f"; done
}
# putlib DIR SONAME...: copy each library's soname link and the file it points to (same folder)
putlib() {
  local d=$1 n; shift
  for n; do put "$d/$n" "$(readlink -f "$d/$n")"; done
}

# 1. Programs: orterun (mpirun/mpiexec are links to it), orted, and ompi_info for checking the setup.
put /usr/bin/orterun /usr/bin/orted /usr/bin/ompi_info
ln -s orterun "$out/usr/bin/mpirun"
ln -s orterun "$out/usr/bin/mpiexec"

# 2. Libraries: Open MPI's own, then what they and the kept components need (not glibc/libstdc++).
putlib $ML libmpi.so.40 libmpi_cxx.so.40 libopen-rte.so.40 libopen-pal.so.40 \
  libmca_common_sm.so.40 libmca_common_monitoring.so.50 libmca_common_ompio.so.41 \
  libhwloc.so.15 libevent_core-2.1.so.7 libevent_pthreads-2.1.so.7 libmunge.so.2
putlib $PX/lib libpmix.so.2
mkdir -p "$out/lib-fallback"
for n in libz.so.1 libudev.so.1; do cp -L $ML/$n "$out/lib-fallback/$n"; done

# 3. MCA components, less those that need libraries left out (UCX, libfabric, verbs, PSM, libnl)
#    and OpenSHMEM's frameworks (liboshmem is not carried).
mkdir -p "$out$OL/openmpi3" "$out$PX/lib/pmix"
for f in "$OL"/openmpi3/*.so; do
  case ${f##*/} in
    *_ucx.so | *_ofi.so | *_openib.so | *_psm.so | *_psm2.so | mca_reachable_netlink.so) continue ;;
    mca_atomic_* | mca_memheap_* | mca_scoll_* | mca_spml_* | mca_sshmem_*) continue ;;
  esac
  cp -a "$f" "$out$f"
done
cp -a "$PX"/lib/pmix/*.so "$out$PX/lib/pmix/"
# An empty hwloc plugin folder: HWLOC_PLUGINS_PATH points here, so no host plugin is tried.
mkdir -p "$out$ML/hwloc" && touch "$out$ML/hwloc/.keep"

# 4. Help texts and configuration. PMIx's file names its component folder by absolute path; that
#    line is dropped (activate.sh sets PMIX_MCA_mca_base_component_path instead).
put /usr/share/openmpi
mkdir -p "$out/etc/openmpi"
cp /etc/openmpi/openmpi-mca-params.conf /etc/openmpi/openmpi-default-hostfile "$out/etc/openmpi/"
put "$PX/share"
sed -i 's|^mca_base_component_path *=.*|# (mca_base_component_path: set by activate.sh)|' \
  "$out$PX/share/pmix-mca-params.conf"

# 5. Check: every library an ELF file here needs is carried, or is one the target system provides.
have=" $(find "$out" \( -type f -o -type l \) -name 'lib*.so*' -printf '%f ') "
system=" libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 libutil.so.1 ld-linux-x86-64.so.2 libstdc++.so.6 libgcc_s.so.1 "
bad=0
while IFS= read -r f; do
  for n in $(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    [[ $have == *" $n "* || $system == *" $n "* ]] || { echo "missing: $f needs $n" >&2; bad=1; }
  done
done < <(find "$out" -type f \( -name '*.so*' -o -path '*/bin/*' \))
[[ $bad == 0 ]] || exit 1

# 6. The activation file: everything relative to its own folder.
cat > "$out/activate.sh" <<'EOF'
# Source this (bash) to use the carried Open MPI: source .mpi-carry/activate.sh
# Written by scripts/mpi-carry.sh. Paths are found from this file's own location.
_mc=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_ml=$_mc/usr/lib/x86_64-linux-gnu
_px=$_ml/pmix2
export PATH=$_mc/usr/bin${PATH:+:$PATH}
export LD_LIBRARY_PATH=$_ml:$_px/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# zlib / libudev from Debian only where the system has none (its own are newer).
# (No pipes or failing commands here: callers may source this under set -euo pipefail.)
_ldc=$({ /sbin/ldconfig -p || ldconfig -p; } 2>/dev/null) || true
for _l in "$_mc"/lib-fallback/*; do
  [[ $_ldc == *$'\t'"${_l##*/} ("* ]] || { LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$_mc/lib-fallback; break; }
done
# Relocation: Open MPI's prefix stands for /usr; its sysconfdir (/etc/openmpi) is not under it.
export OPAL_PREFIX=$_mc/usr
export OPAL_SYSCONFDIR=$_mc/etc/openmpi
# PMIx 4.2 (prefix .../pmix2; its libdir/datadir are configured as absolute paths, so set each)
export PMIX_PREFIX=$_px PMIX_INSTALL_PREFIX=$_px PMIX_EXEC_PREFIX=$_px
export PMIX_LIBDIR=$_px/lib PMIX_PKGLIBDIR=$_px/lib/pmix
export PMIX_DATAROOTDIR=$_px/share PMIX_DATADIR=$_px/share PMIX_SYSCONFDIR=$_px/share PMIX_PKGDATADIR=$_px/share/pmix
export PMIX_MCA_mca_base_component_path=$_px/lib/pmix
# hwloc: no plugins (the folder is empty), so none of the host's is loaded
export HWLOC_PLUGINS_PATH=$_ml/hwloc
# Fresh machines run commands as root
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Single node, shared memory: self + vader, ob1; the transports not carried are switched off;
# local launch needs no ssh (plm isolated); no CMA single copy (often refused in containers);
# no binding and oversubscription allowed (the machine may give us few cores).
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_mtl=^ofi,psm,psm2 OMPI_MCA_osc=^ucx,pt2pt
export OMPI_MCA_reachable=^netlink OMPI_MCA_plm=isolated
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_rmaps_base_oversubscribe=1
unset _mc _ml _px _l _ldc
EOF

du -sh "$out"
