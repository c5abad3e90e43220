// Tuning-database benchmarks on both backends in one run: insert throughput (one record per
// transaction vs batches) and the latency of the two queries the search and the compiler issue
// all the time, best-k and HasMeasured, on a log of 1 million records (--records N or
// TUNED_DB_BENCH_RECORDS to change it). SQLite always; PostgreSQL when --postgres URL (or
// TUNED_DB_BENCH_POSTGRES) names a server database, in schemas of its own (tuned_bench_*).
// The large logs are built once (an SQLite file in $TUNED_DB_BENCH_DIR, default /tmp, and a
// schema) and reused while their record count matches. Latency benchmarks report p50/p99 per
// query in microseconds as counters. Names end in /sqlite or /postgresql.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#ifdef TUNED_HAVE_POSTGRESQL
#include <libpq-fe.h>
#endif

#include "common/logging.h"
#include "tuning_db/database.h"
#include "tuning_db/trace_hash.h"

namespace {

using tuned::db::Database;

constexpr int kWorkloads = 1000;
constexpr int kTargets = 2;

int64_t g_records = 1000000;  // --records, TUNED_DB_BENCH_RECORDS
std::string g_postgres_url;   // --postgres, TUNED_DB_BENCH_POSTGRES

int64_t LargeRecordCount() { return g_records; }

std::string BenchDir() {
  const char* env = std::getenv("TUNED_DB_BENCH_DIR");
  return env != nullptr ? env : "/tmp";
}

std::string WorkloadKey(int w) {
  return "matmul(M=" + std::to_string(64 + w) + ",N=512,K=512,dtype=float32)";
}

std::string TargetString(int t) { return "llvm -mcpu=znver" + std::to_string(3 + t); }

// A record shaped like a real one: a dozen instructions, three tile decisions, ten repeats.
tuned::v1::TuningRecord MakeRecord(int workload, int target, int64_t seq, std::mt19937_64& rng) {
  tuned::v1::TuningRecord record;
  auto* w = record.mutable_workload();
  w->set_key(WorkloadKey(workload));
  w->set_op("matmul");
  w->set_flops(2.0 * (64 + workload) * 512 * 512);
  record.mutable_target()->set_target(TargetString(target));
  record.mutable_target()->set_kind(tuned::v1::TARGET_KIND_LLVM_CPU);
  auto* trace = record.mutable_trace();
  trace->set_version(1);
  const char* kinds[] = {"get_block", "get_loops",           "sample_perfect_tile",
                         "split",     "sample_perfect_tile", "split",
                         "reorder",   "cache_write",         "reverse_compute_at",
                         "parallel",  "vectorize",           "sample_categorical"};
  uint32_t rv = 0;
  for (const char* kind : kinds) {
    auto* inst = trace->add_instructions();
    inst->set_kind(kind);
    inst->add_inputs()->set_rv(rv);
    inst->add_int_attrs(4);
    inst->add_str_attrs("C");
    inst->add_outputs(++rv);
  }
  for (uint32_t index : {2u, 4u, 11u}) {
    auto* decision = trace->add_decisions();
    decision->set_instruction(index);
    decision->add_values(static_cast<int64_t>(seq));  // Unique per record.
    decision->add_values(static_cast<int64_t>(rng() % 64));
  }
  auto* result = record.mutable_result();
  // One record in ten fails, spread over every workload and target.
  result->set_status((seq / 7) % 10 == 0 ? tuned::v1::MEASURE_STATUS_COMPILE_ERROR
                                         : tuned::v1::MEASURE_STATUS_OK);
  std::uniform_real_distribution<double> time(1e-4, 1e-2);
  double median = time(rng);
  if (result->status() == tuned::v1::MEASURE_STATUS_OK) {
    for (int r = 0; r < 10; ++r) result->add_repeat_seconds(median * (1 + 0.01 * (r - 5)));
    result->set_median_seconds(median);
  } else {
    result->set_error("split factors do not divide the loop extent");
  }
  result->set_worker_id("worker-" + std::to_string(seq % 8));
  result->mutable_device()->set_model("AMD EPYC 7B13");
  record.mutable_config()->set_repeat(10);
  record.set_tuner_version("0.1.0");
  record.set_task_id("task-" + std::to_string(workload));
  record.set_created_unix_ms(1700000000000 + seq);
  return record;
}

std::unique_ptr<Database> OpenOrDie(const std::string& location) {
  auto db = tuned::db::OpenDatabase(location);
  if (!db.ok()) {
    std::fprintf(stderr, "db_bench: %s\n", db.status().message().c_str());
    std::exit(1);
  }
  return std::move(db).value();
}

enum class Backend { kSqlite, kPostgres };

const char* BackendName(Backend backend) {
  return backend == Backend::kSqlite ? "sqlite" : "postgresql";
}

#ifdef TUNED_HAVE_POSTGRESQL
// Runs `sql` on the benchmark's server database; an error ends the program.
void RunOnServer(const std::string& sql) {
  PGconn* conn = PQconnectdb(g_postgres_url.c_str());
  PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);  // "does not exist, skipping"
  PGresult* result = PQstatus(conn) == CONNECTION_OK ? PQexec(conn, sql.c_str()) : nullptr;
  const bool ok = result != nullptr && PQresultStatus(result) == PGRES_COMMAND_OK;
  if (!ok) std::fprintf(stderr, "db_bench: %s: %s\n", sql.c_str(), PQerrorMessage(conn));
  PQclear(result);
  PQfinish(conn);
  if (!ok) std::exit(1);
}

// The benchmark URL with its tables in `schema`.
std::string SchemaUrl(const std::string& schema) {
  const char separator = g_postgres_url.find('?') == std::string::npos ? '?' : '&';
  return g_postgres_url + separator + "options=-csearch_path%3D" + schema;
}
#endif

// Where a log named `name` lives; `fresh` empties it first.
std::string LogLocation(Backend backend, const std::string& name, bool fresh) {
  if (backend == Backend::kSqlite) {
    std::string path = BenchDir() + "/tuned_db_bench_" + name + ".db";
    if (fresh) {
      for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
    }
    return path;
  }
#ifdef TUNED_HAVE_POSTGRESQL
  const std::string schema = "tuned_bench_" + name;
  if (fresh) RunOnServer("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
  RunOnServer("CREATE SCHEMA IF NOT EXISTS " + schema);
  return SchemaUrl(schema);
#else
  std::fprintf(stderr, "db_bench: this build has no PostgreSQL backend\n");
  std::exit(1);
#endif
}

void BM_InsertBatched(benchmark::State& state, Backend backend) {
  const int batch_size = static_cast<int>(state.range(0));
  auto db = OpenOrDie(LogLocation(backend, "insert_" + std::to_string(batch_size), true));
  std::mt19937_64 rng(1);
  int64_t seq = 0;
  std::vector<tuned::v1::TuningRecord> batch;
  for (auto _ : state) {
    state.PauseTiming();
    batch.clear();
    for (int i = 0; i < batch_size; ++i, ++seq) {
      batch.push_back(MakeRecord(static_cast<int>(seq % kWorkloads), 0, seq, rng));
    }
    state.ResumeTiming();
    auto result = db->InsertRecords(batch);
    if (!result.ok()) state.SkipWithError(result.status().message().c_str());
  }
  state.SetItemsProcessed(state.iterations() * batch_size);
}

// The 1M-record log of a backend, built on first use (minutes on 2 cores) and reused.
Database& LargeDatabase(Backend backend) {
  static std::map<Backend, std::unique_ptr<Database>> logs;
  std::unique_ptr<Database>& db = logs[backend];
  if (db != nullptr) return *db;
  db = [backend] {
    const int64_t count = LargeRecordCount();
    const std::string name = std::to_string(count);
    auto opened = OpenOrDie(LogLocation(backend, name, false));
    auto stats = opened->Stats();
    if (stats.ok() && stats->num_records == count) return opened;
    opened.reset();
    opened = OpenOrDie(LogLocation(backend, name, true));
    std::mt19937_64 rng(7);
    std::vector<tuned::v1::TuningRecord> batch;
    auto start = std::chrono::steady_clock::now();
    for (int64_t seq = 0; seq < count; ++seq) {
      batch.push_back(MakeRecord(static_cast<int>(seq % kWorkloads),
                                 static_cast<int>((seq / kWorkloads) % kTargets), seq, rng));
      if (batch.size() == 5000 || seq + 1 == count) {
        auto result = opened->InsertRecords(batch);
        if (!result.ok()) {
          std::fprintf(stderr, "db_bench: %s\n", result.status().message().c_str());
          std::exit(1);
        }
        batch.clear();
      }
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "db_bench: built %lld %s records in %.1f s (%.0f records/s)\n",
                 static_cast<long long>(count), BackendName(backend), seconds, count / seconds);
    return opened;
  }();
  return *db;
}

void ReportPercentiles(benchmark::State& state, std::vector<double>& micros) {
  if (micros.empty()) return;
  std::sort(micros.begin(), micros.end());
  state.counters["p50_us"] = micros[micros.size() / 2];
  state.counters["p99_us"] = micros[std::min(micros.size() - 1, micros.size() * 99 / 100)];
}

void BM_BestK(benchmark::State& state, Backend backend) {
  Database& db = LargeDatabase(backend);
  std::mt19937_64 rng(3);
  std::vector<double> micros;
  tuned::db::BestRecordsQuery query;
  query.limit = static_cast<int>(state.range(0));
  for (auto _ : state) {
    query.workload_key = WorkloadKey(static_cast<int>(rng() % kWorkloads));
    query.target = TargetString(static_cast<int>(rng() % kTargets));
    auto start = std::chrono::steady_clock::now();
    auto best = db.GetBestRecords(query);
    micros.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count());
    if (!best.ok() || best->records.empty()) {
      state.SkipWithError(best.ok() ? best->miss_reason.c_str() : best.status().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(best);
  }
  ReportPercentiles(state, micros);
}

void BM_HasMeasured(benchmark::State& state, Backend backend) {
  Database& db = LargeDatabase(backend);
  std::mt19937_64 rng(5);
  std::vector<double> micros;
  // Half the probes are traces that were measured, half are new ones.
  const int64_t count = LargeRecordCount();
  for (auto _ : state) {
    state.PauseTiming();
    int64_t seq = static_cast<int64_t>(rng() % static_cast<uint64_t>(count));
    const bool present = rng() % 2 == 0;
    std::mt19937_64 record_rng(seq);
    auto record = MakeRecord(static_cast<int>(seq % kWorkloads),
                             static_cast<int>((seq / kWorkloads) % kTargets),
                             present ? seq : count + seq, record_rng);
    // The stored trace used the build's rng for its second decision values; probe by the stored
    // hash for present ones.
    std::string hash = tuned::db::TraceHash(record.trace());
    if (present) {
      tuned::db::RecordFilter filter;
      filter.after_id = seq;
      filter.limit = 1;
      auto stored = db.ListRecords(filter);
      if (stored.ok() && !stored->empty()) {
        record = stored->front();
        hash = record.trace_hash();
      }
    }
    state.ResumeTiming();
    auto start = std::chrono::steady_clock::now();
    auto measured = db.HasMeasured(record.workload().key(), record.target().target(), hash);
    micros.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count());
    if (!measured.ok()) {
      state.SkipWithError(measured.status().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(measured);
  }
  ReportPercentiles(state, micros);
}

void RegisterFor(Backend backend) {
  const std::string suffix = std::string("/") + BackendName(backend);
  benchmark::RegisterBenchmark(("BM_InsertBatched" + suffix).c_str(), BM_InsertBatched, backend)
      ->Arg(1)
      ->Arg(10)
      ->Arg(100)
      ->Arg(1000)
      ->UseRealTime()  // fsync-bound: records per wall-clock second is what matters.
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(("BM_BestK" + suffix).c_str(), BM_BestK, backend)
      ->Arg(1)
      ->Arg(10)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark(("BM_HasMeasured" + suffix).c_str(), BM_HasMeasured, backend)
      ->Unit(benchmark::kMicrosecond);
}

// Takes `--name VALUE` / `--name=VALUE` out of argv (Google Benchmark refuses unknown flags).
bool TakeFlag(int& argc, char** argv, const char* name, std::string* value) {
  const size_t length = std::strlen(name);
  for (int i = 1; i < argc; ++i) {
    int used = 0;
    if (std::strcmp(argv[i], name) == 0 && i + 1 < argc) {
      *value = argv[i + 1];
      used = 2;
    } else if (std::strncmp(argv[i], name, length) == 0 && argv[i][length] == '=') {
      *value = argv[i] + length + 1;
      used = 1;
    }
    if (used == 0) continue;
    for (int j = i; j + used <= argc; ++j) argv[j] = argv[j + used];
    argc -= used;
    return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  // Quiet by default (TUNED_LOG overrides): every fresh database logs its migrations at info.
  if (!tuned::InitLogging("").ok()) return 1;
  if (const char* env = std::getenv("TUNED_DB_BENCH_RECORDS")) g_records = std::atoll(env);
  if (const char* env = std::getenv("TUNED_DB_BENCH_POSTGRES")) g_postgres_url = env;
  std::string flag;
  if (TakeFlag(argc, argv, "--records", &flag)) g_records = std::atoll(flag.c_str());
  TakeFlag(argc, argv, "--postgres", &g_postgres_url);
  if (g_records < 1000) {
    std::fprintf(stderr, "db_bench: --records must be at least 1000, not %lld\n",
                 static_cast<long long>(g_records));
    return 2;
  }
#ifndef TUNED_HAVE_POSTGRESQL
  if (!g_postgres_url.empty()) {
    std::fprintf(stderr, "db_bench: --postgres given, but this build has no PostgreSQL backend\n");
    return 2;
  }
#endif
  RegisterFor(Backend::kSqlite);
  if (!g_postgres_url.empty()) RegisterFor(Backend::kPostgres);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
