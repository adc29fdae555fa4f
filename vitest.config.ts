import { defineConfig } from 'vitest/config'

// Real servers and a real browser: generous limits, and files in parallel only as far as two
// cores allow.
const shared = { testTimeout: 60_000, hookTimeout: 120_000 }

export default defineConfig({
  test: {
    maxWorkers: 2,
    projects: [
      // Pure logic and step-through fakes: no store, no browser, no real wait (`npm run test:unit`).
      // Threads that keep their modules from file to file (isolate: false): a fresh process per
      // file re-imported TypeScript, jsdom and the AWS SDK 68 times and made up most of the lane's
      // time. A file that mocks a module or stubs a global undoes it when it ends.
      {
        test: { ...shared, name: 'unit', include: ['tests/unit/**/*.test.{ts,tsx}'], pool: 'threads', isolate: false },
      },
      // What reads the sources, docs and package.json as a whole (the TypeScript compiler over every
      // doc snippet and entry, the import graph, figures against bench/RESULTS.md) or runs vitest
      // itself: no store or browser either, but seconds per file, so kept out of the unit lane
      // (`npm run test:checks`).
      { test: { ...shared, name: 'checks', include: ['tests/checks/**/*.test.ts'], pool: 'threads', isolate: false } },
      // Everything that talks to a real S3 server, STS stand-in or Chromium. One RGW for the run.
      {
        test: {
          ...shared,
          name: 'integration',
          include: ['tests/**/*.test.{ts,tsx}'],
          exclude: ['tests/unit/**', 'tests/checks/**'],
          pool: 'forks',
          globalSetup: ['tests/helpers/global-setup.ts'],
        },
      },
    ],
  },
})
