// test_context_rows.cpp - a HOST context with rows (cudot_config.rows, cudot_dot_each_row): each row's
// bits are those of its own dot, for every pair and any prefix of rows and elements; bad calls and
// configs are refused with a message. The GPU strategies run the same checks in test_gpu_rows.cpp.
#include <catch2/catch.hpp>

#include <string>

#include "context_rows.hpp"

TEST_CASE("context rows: HOST, every pair, each row with its own dot's bits", "[rows][api]") {
    test::check_context_rows(CUDOT_MEMORY_HOST, 0);
}

TEST_CASE("context rows: HOST in the exact mode, each row with its own exact dot's bits", "[rows][api][exact]") {
    test::check_context_rows(CUDOT_MEMORY_HOST, 0, CUDOT_MODE_EXACT);
}

TEST_CASE("context rows: HOST, bad calls leave the results alone", "[rows][api][errors]") {
    test::check_context_rows_refusals(CUDOT_MEMORY_HOST, 0);
}

TEST_CASE("context rows: configs of every size, and rows * n overflowing", "[rows][api][errors]") {
    cudot_config c = CUDOT_CONFIG_INIT;
    c.memory = CUDOT_MEMORY_HOST;
    c.rows = 4;
    cudot_ctx *ctx = nullptr;
    SECTION("a 1.5-1.9 config (24 bytes) has one row, whatever follows it") {
        c.size = 24;
        REQUIRE(cudot_init(&ctx, 10, &c) == CUDOT_OK);
        std::size_t rows = 0, n = 0, capacity = 0;
        REQUIRE(cudot_get_rows(ctx, &rows, &n) == CUDOT_OK);
        REQUIRE(cudot_get_capacity(ctx, &capacity) == CUDOT_OK);
        CHECK(rows == 1);
        CHECK(n == 10);
        CHECK(capacity == 10);
        cudot_deinit(ctx);
    }
    SECTION("rows 0 means one row") {
        c.rows = 0;
        REQUIRE(cudot_init(&ctx, 10, &c) == CUDOT_OK);
        std::size_t rows = 0;
        REQUIRE(cudot_get_rows(ctx, &rows, nullptr) == CUDOT_OK);
        CHECK(rows == 1);
        double r = -1;
        CHECK(cudot_dot_each_row(ctx, 1, 10, &r) == CUDOT_OK);
        CHECK(test::bits(r) == test::bits(0.0));  // buffers read zero after init
        cudot_deinit(ctx);
    }
    SECTION("sizes inside the rows field are garbage") {
        for (uint32_t size : {25u, 28u, 31u}) {
            c.size = size;
            CHECK(cudot_init(&ctx, 10, &c) == CUDOT_ERROR_INVALID_ARGUMENT);
            CHECK(ctx == nullptr);
            CHECK(std::string(cudot_last_error(nullptr)).find("config->size") != std::string::npos);
        }
    }
    SECTION("rows * n beyond the address space") {
        c.rows = uint64_t(1) << 62;
        CHECK(cudot_init(&ctx, 16, &c) == CUDOT_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(cudot_last_error(nullptr)).find("overflows") != std::string::npos);
        c.rows = ~uint64_t(0);
        CHECK(cudot_init(&ctx, 1, &c) == CUDOT_ERROR_INVALID_ARGUMENT);
        CHECK(ctx == nullptr);
    }
}
