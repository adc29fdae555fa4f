import { defineConfig } from 'vitest/config'

// Real servers and a real browser: generous limits, and files in parallel only as far as two
// cores allow.
const shared = { testTimeout: 60_000, hookTimeout: 120_000 }

export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      // Pure logic and step-through fakes: no server, runs in seconds (`vitest --project unit`).
      { test: { ...shared, name: 'unit', include: ['tests/unit/**/*.test.{ts,tsx}'] } },
      // Everything that talks to a real S3 server, STS stand-in or Chromium. One RGW for the run.
      {
        test: {
          ...shared,
          name: 'integration',
          include: ['tests/**/*.test.{ts,tsx}'],
          exclude: ['tests/unit/**'],
          globalSetup: ['tests/helpers/global-setup.ts'],
        },
      },
    ],
  },
})
