#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# mpi_hydra_rank.sh EXE ARGS...: one rank of an MPICH (Hydra) job whose
# rank may be killed (mpi_run.sh, scenario killed). Hydra's proxy
# (hydra_pmi_proxy, MPICH 4.0.2 src/pm/hydra/pm/pmiserv/pmip.c, main)
# sends SIGKILL to the process group of every rank it started as soon as
# one of them ends by a signal, whatever -disable-auto-cleanup says; and
# when a rank's PMI connection closes without MPI_Finalize it sends
# SIGUSR1 to every rank's process group (pmip_cb.c, pmi_cb, with
# -disable-auto-cleanup), which MPICH's ranks catch (ch4_init.c) but a
# shell dies of. So this shell stands between the proxy and the rank: it
# catches the SIGUSR1 (a handler, which the rank's exec resets: the rank
# gets MPICH's own) and
# ends normally, with the rank's status (128 + N after signal N), so the
# proxy never sees a child killed by a signal.
trap : USR1
"$@"
exit $?
