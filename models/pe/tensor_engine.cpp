#include "models/pe/tensor_engine.h"

#include "models/common/sim.h"

#include <stdexcept>

namespace nctlm {

TensorEngine::TensorEngine(sc_core::sc_module_name name, const PeConfig& cfg)
    : sc_module(name), sbuf_socket("sbuf_socket"), psum_socket("psum_socket"), cfg_(cfg),
      matmuls_(stats().counter(std::string(this->name()) + ".matmuls", "")),
      busy_ns_(stats().counter(std::string(this->name()) + ".busy_ns", "ns")),
      fetch_bytes_(stats().counter(std::string(this->name()) + ".fetch_bytes", "B")),
      fetch_busy_ns_(stats().counter(std::string(this->name()) + ".fetch_busy_ns", "ns")) {}

bool TensorEngine::fetch(const Instruction& ins) {
    sc_core::sc_time d = fetch_access_.run(sbuf_socket, false, ins.partition, ins.partitions, ins.offset, ins.bytes);
    fetch_bytes_.add(double(ins.bytes));
    fetch_busy_ns_.add(ns(d));
    sc_core::wait(d);
    return fetch_access_.ok();
}

bool TensorEngine::matmul(const Instruction& ins) {
    if (ins.n_stationary > cfg_.tensor_cols || ins.k_rows > cfg_.tensor_rows ||
        ins.n_moving > cfg_.moving_max)
        throw std::invalid_argument(std::string(name()) + ": matmul operands exceed the array");
    // The array's time (issue gap, cost rule, static overhead) and the accumulator write into PSUM
    // run together; the instruction retires when both are done.
    sc_core::sc_time compute = to_sc(cfg_.matmul_time(ins.n_stationary, ins.n_moving, ins.dtype));
    sc_core::sc_time write =
        psum_access_.run(psum_socket, true, ins.partition, ins.partitions, ins.offset, ins.psum_bytes);
    sc_core::sc_time d = compute > write ? compute : write;
    matmuls_.add(1);
    busy_ns_.add(ns(d));
    sc_core::wait(d);
    return psum_access_.ok();
}

} // namespace nctlm
