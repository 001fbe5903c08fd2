pub mod redisson_config;
