import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['tests/**/*.test.{ts,tsx}'],
    // Real servers and a real browser: generous limits, and files in parallel only as far as
    // two cores allow.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    globalSetup: ['tests/helpers/global-setup.ts'],
  },
})
