import { defineConfig } from 'vitest/config'

// Real servers and a real browser: generous limits, and files in parallel only as far as two
// cores allow.
const shared = { testTimeout: 60_000, hookTimeout: 120_000 }

export default defineConfig({
  test: {
    maxWorkers: 2,
    // Transformed modules kept on disk (node_modules/.experimental-vitest-cache) from run to run:
    // the unit lane's second run takes 16–17 s here against 19–23 s without it.
    experimental: { fsModuleCache: true },
    projects: [
      // Pure logic and step-through fakes: no store, no browser, no real wait (`npm run test:unit`
      // runs both unit projects). Threads that keep their modules from file to file (isolate:
      // false): a fresh process per file re-imported TypeScript, jsdom and the AWS SDK 68 times and
      // made up most of the lane's time. A file that mocks a module or stubs a global undoes it
      // when it ends.
      {
        test: {
          ...shared,
          name: 'unit',
          include: ['tests/unit/**/*.test.{ts,tsx}'],
          exclude: ['tests/unit/dom/**'],
          pool: 'threads',
          isolate: false,
        },
      },
      // The same, in jsdom, as a project of its own: with both environments in one project the lane
      // took 29 s here, split 19–23 s.
      {
        test: {
          ...shared,
          name: 'unit-dom',
          include: ['tests/unit/dom/**/*.test.{ts,tsx}'],
          environment: 'jsdom',
          pool: 'threads',
          isolate: false,
        },
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
