// find_job_source: the order of the sources and the errors when none fits. Only the decisions
// that need no PMIx server are tested here; PMIx itself runs under srun and mpirun in
// tests/launch.
#include "job/job_source.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "env_lookup.hpp"
#include "error.hpp"

namespace braid::detail {
namespace {

using ::testing::HasSubstr;

std::string failure_of(const Vars &vars) {
  try {
    find_job_source(lookup(vars));
  } catch (const Failure &f) {
    EXPECT_EQ(f.code(), BRAID_ERR_BOOTSTRAP);
    return f.message();
  }
  ADD_FAILURE() << "a job source was found";
  return "";
}

const Vars kSrunPmix = {{"PMIX_NAMESPACE", "slurm.pmix.7.0"},
                        {"PMIX_RANK", "1"},
                        {"SLURM_JOB_ID", "7"},
                        {"SLURM_STEP_ID", "0"},
                        {"SLURM_STEP_NUM_TASKS", "4"}};

TEST(JobSource, NothingIsAOneRankWorldAndSaysWhy) {
  auto source = find_job_source(lookup({{"BRAID_TIMEOUT", "7"}}));
  EXPECT_EQ(source->config().size, 1);
  EXPECT_DOUBLE_EQ(source->config().timeout_s, 7.0);
  EXPECT_THAT(source->name(), HasSubstr("BRAID_RANK is unset"));
  EXPECT_THAT(source->name(), HasSubstr("a 1-rank world"));
}

TEST(JobSource, BraidEnvironmentComesFirstEvenUnderPmix) {
  Vars vars = kSrunPmix;
  vars.insert({{"BRAID_RANK", "2"}, {"BRAID_SIZE", "3"}, {"BRAID_BOOTSTRAP", "h:1"}});
  auto source = find_job_source(lookup(vars));  // no PMIx_Init: this would need a server
  EXPECT_EQ(source->config().rank, 2);
  EXPECT_EQ(source->config().size, 3);
  EXPECT_THAT(source->name(), HasSubstr("braid environment (BRAID_RANK=2, BRAID_SIZE=3)"));
}

TEST(JobSource, PartialEnvironmentIsANamedError) {
  EXPECT_EQ(failure_of({{"BRAID_SIZE", "4"}}),
            "no bootstrap source: not started by braidrun, mpirun or srun, and BRAID_RANK is "
            "unset (incomplete job environment: BRAID_RANK is unset while BRAID_SIZE is set)");
  EXPECT_THAT(failure_of({{"BRAID_RENDEZVOUS", "h:1"}}), HasSubstr("BRAID_RENDEZVOUS is set"));
}

TEST(JobSource, PartialEnvironmentUnderPmixIsAnErrorToo) {
  Vars vars = kSrunPmix;
  vars["BRAID_SIZE"] = "4";
  EXPECT_THAT(failure_of(vars), HasSubstr("incomplete job environment: BRAID_RANK is unset while "
                                          "BRAID_SIZE is set (started by srun through PMIx"));
}

TEST(JobSource, MpirunInsideASlurmAllocationIsNamedMpirun) {
  // mpirun run from an sbatch script: its ranks inherit the allocation's SLURM_JOB_ID.
  Vars vars = {{"PMIX_NAMESPACE", "prterun-host-1@1"},
               {"PMIX_RANK", "0"},
               {"SLURM_JOB_ID", "7"},
               {"OMPI_COMMAND", "app"},
               {"OMPI_COMM_WORLD_SIZE", "4"},
               {"BRAID_SIZE", "4"}};
  EXPECT_THAT(failure_of(vars), HasSubstr("(started by mpirun through PMIx"));
}

TEST(JobSource, AMalformedValueIsReportedAsItself) {
  // Not "no bootstrap source", nor "unset them and PMIx describes the job": PMIx gives no
  // timeout, and the source is not what is wrong.
  for (const Vars &base : {Vars{}, kSrunPmix}) {
    Vars vars = base;
    vars["BRAID_TIMEOUT"] = "abc";
    try {
      find_job_source(lookup(vars));
      ADD_FAILURE() << "BRAID_TIMEOUT=abc was accepted";
    } catch (const Failure &f) {
      EXPECT_EQ(f.code(), BRAID_ERR_INVALID_ARGUMENT);
      EXPECT_EQ(f.message(), "BRAID_TIMEOUT='abc' is not a positive number of seconds");
    }
  }
}

TEST(JobSource, ALauncherWithoutPmixIsNotAOneRankWorld) {
  EXPECT_EQ(failure_of({{"SLURM_STEP_NUM_TASKS", "4"}, {"SLURM_PROCID", "1"}}),
            "no bootstrap source: not started by braidrun, mpirun or srun, and BRAID_RANK is "
            "unset, yet SLURM_STEP_NUM_TASKS=4: srun started it without PMIx; use srun "
            "--mpi=pmix");
  EXPECT_THAT(failure_of({{"PMI_SIZE", "2"}, {"PMI_RANK", "0"}}),
              HasSubstr("PMI_SIZE=2: a PMI-1/PMI-2 launcher started it"));
  EXPECT_THAT(failure_of({{"OMPI_COMM_WORLD_SIZE", "3"}}),
              HasSubstr("OMPI_COMM_WORLD_SIZE=3: Open MPI's mpirun started it"));
}

TEST(JobSource, ALauncherOfOneProcessIsAOneRankWorld) {
  auto source = find_job_source(
      lookup({{"SLURM_STEP_NUM_TASKS", "1"}, {"OMPI_COMM_WORLD_SIZE", "1"}, {"PMI_SIZE", "x"}}));
  EXPECT_EQ(source->config().size, 1);
}

}  // namespace
}  // namespace braid::detail
