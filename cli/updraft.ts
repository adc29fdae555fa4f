// `npx updraft-s3 doctor` and `npx updraft-s3 setup-bucket`, with the upload API's settings (S3_UPLOAD_*);
// `npx updraft-s3 store`, the local store for development (store.ts); `npx updraft-s3 init
// <framework>`, which writes a quick start's files (init.ts).
import { createInterface } from 'node:readline/promises'
import { parseArgs } from 'node:util'
import { type ResolvedConfig, resolveConfig } from '../server/config.ts'
import { describeStore } from '../server/info.ts'
import { importNeeding, MissingPackagesError, SERVER_PACKAGES } from '../server/optional-peers.ts'
import { PROVIDERS, type Provider } from './bucket-rules.ts'
import type { Finding } from './doctor.ts'
import { QUICK_STARTS, type QuickStart, runInit } from './init.ts'
import { runStore } from './store.ts'

const DEFAULT_ORIGIN = 'http://localhost:3000'

const USAGE = `Usage:
  npx updraft-s3 init next|fastify|hono|worker [--force]
      Writes that quick start's files (the page and the upload API) into the current folder, adds
      its scripts and "type": "module" to package.json, and prints the npm install line for the
      packages package.json lacks. Overwrites nothing without --force.
  npx updraft-s3 doctor [--origin URL] [--provider aws|r2|b2|minio|ceph|swift] [--key-prefix PREFIX]
      Checks the bucket, key, CORS (a real preflight from URL), lifecycle rules, least privilege,
      STS and clock, and says what to change for each finding. Exits 1 when a check fails.
  npx updraft-s3 setup-bucket [--origin URL]... [--key-prefix PREFIX] [--dry-run] [--yes]
      Adds the CORS rule (for every --origin) and the lifecycle rule uploads need, keeping the
      bucket's other rules; shows them first. --dry-run only shows them; --yes applies without asking.
  npx updraft-s3 store
      Runs a local S3-compatible store for development (s3rver, a devDependency) on 127.0.0.1:4568
      (UPDRAFT_S3_PORT) with a bucket "uploads", objects in .data/s3 (UPDRAFT_DATA_DIR), and prints
      the S3_UPLOAD_* settings that point your app at it, for bash, zsh and PowerShell.

Settings come from the environment, as the upload API reads them: S3_UPLOAD_KEY, S3_UPLOAD_SECRET,
S3_UPLOAD_BUCKET, S3_UPLOAD_REGION, and S3_UPLOAD_ENDPOINT (+ S3_UPLOAD_FORCE_PATH_STYLE=true) for
R2, B2, MinIO or Ceph; S3_UPLOAD_STS_MODE and S3_UPLOAD_ROLE_ARN for token mode through AssumeRole.
--origin defaults to ${DEFAULT_ORIGIN}; --key-prefix is the upload API's keyPrefix (default
next-s3-uploads/): a lifecycle rule on a prefix of it is enough.`

const MARK = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL', skip: 'skip' } as const

/** The command line's words and flags; throws on an unknown flag. */
const parseCommandLine = (argv: string[]) =>
  parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      origin: { type: 'string', multiple: true },
      provider: { type: 'string' },
      'key-prefix': { type: 'string' },
      'dry-run': { type: 'boolean' },
      yes: { type: 'boolean' },
      force: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  })

/** Runs the command in `argv`; resolves with the exit code. Output goes through `print`. */
export async function main(
  argv: string[],
  print: (line: string) => void = console.log,
  ask = askOnTerminal,
): Promise<number> {
  let parsed: ReturnType<typeof parseCommandLine>
  try {
    parsed = parseCommandLine(argv)
  } catch (error) {
    print(`${(error as Error).message}\n\n${USAGE}`)
    return 2
  }
  const { positionals, values } = parsed
  const command = positionals[0]
  if (command === 'init' && !values.help) {
    const quickStart = positionals[1]
    if (positionals.length !== 2 || !Object.hasOwn(QUICK_STARTS, quickStart!)) {
      print(`init takes one of ${Object.keys(QUICK_STARTS).join(', ')}, as in: npx updraft-s3 init hono`)
      return 2
    }
    return runInit(quickStart as QuickStart, process.cwd(), values.force === true, print)
  }
  if (values.help || !command || positionals.length > 1 || !['doctor', 'setup-bucket', 'store'].includes(command)) {
    print(USAGE)
    return values.help ? 0 : 2
  }
  if (command === 'store') return runStore(process.env, print)
  const provider = values.provider as Provider | undefined
  if (provider && !PROVIDERS.includes(provider)) {
    print(`--provider must be one of ${PROVIDERS.join(', ')}, got '${provider}'`)
    return 2
  }
  const origins = values.origin ?? [DEFAULT_ORIGIN]
  for (const origin of origins) {
    if (!URL.canParse(origin) || new URL(origin).origin !== origin) {
      print(`--origin must be an origin such as https://app.example.com (scheme, host, port; no path), got '${origin}'`)
      return 2
    }
  }
  let tools: typeof import('./bucket-tools.ts')
  try {
    tools = await importNeeding(`npx updraft-s3 ${command}`, SERVER_PACKAGES, () => import('./bucket-tools.ts'))
  } catch (error) {
    if (!(error instanceof MissingPackagesError)) throw error
    print(error.message)
    return 1
  }
  const {
    applyBucketPlan,
    createS3Client,
    credentialsOf,
    describePlan,
    keyPolicyJson,
    keySigns,
    pageHeaders,
    planBucket,
    preflightRefusals,
    runDoctor,
    storageProbe,
  } = tools
  let config: ResolvedConfig
  try {
    config = resolveConfig({ keyPrefix: values['key-prefix'] })
  } catch (error) {
    print(`${(error as Error).message.replace(/^updraft: /, '')}\nSet them in the environment, as for the upload API.`)
    return 2
  }

  if (command === 'doctor') {
    print(`updraft-s3 doctor: ${describeStore(config)}, page origin ${origins[0]}\n`)
    const findings = await runDoctor(config, { origin: origins[0]!, ...(provider ? { provider } : {}) })
    for (const finding of findings) print(formatFinding(finding))
    const failed = findings.filter(({ status }) => status === 'fail').length
    print(
      failed === 0
        ? '\nNo check failed.'
        : `\n${failed} check(s) failed: uploads from ${origins[0]} will not work until they are fixed.`,
    )
    return failed === 0 ? 0 : 1
  }

  const client = createS3Client(config)
  try {
    const probe = storageProbe(config, await credentialsOf(client)())
    const headers = pageHeaders(config)
    const plan = await planBucket(client, config.bucket, origins, config.keyPrefix, {
      signs: await keySigns(probe),
      preflightPasses: async (origin) => (await preflightRefusals(probe, origin, headers)).length === 0,
    })
    print(`updraft-s3 setup-bucket: ${describeStore(config)}\n`)
    for (const block of describePlan(plan)) print(block)
    // The bucket's owner runs this; the upload API's own key is the next thing to set up.
    print(
      `The upload API's own key (S3_UPLOAD_KEY) needs only this policy (AWS IAM; MinIO and Ceph bucket policies take the same statements):\n${keyPolicyJson(config)}\n`,
    )
    if (plan.cors.change !== 'add' && plan.lifecycle.change !== 'add') {
      print('Nothing to change.')
      return 0
    }
    if (values['dry-run']) {
      print('Dry run: nothing was changed.')
      return 0
    }
    if (!values.yes && !(await ask(`Apply these to bucket "${config.bucket}"? [y/N] `))) {
      print('Nothing was changed.')
      return 1
    }
    const lines = await applyBucketPlan(client, config.bucket, plan)
    for (const line of lines) print(line)
    return lines.every((line) => /applied|unchanged|not supported/.test(line)) ? 0 : 1
  } finally {
    client.destroy()
  }
}

export function formatFinding({ check, status, summary, fix }: Finding): string {
  const head = `${MARK[status]}  ${check.padEnd(16)} ${summary}`
  return fix ? `${head}\n${fix.replace(/^/gm, '        ')}` : head
}

/** Asks on the terminal; with no terminal (CI, a pipe) the answer is no: pass --yes there. */
async function askOnTerminal(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false
  const terminal = createInterface({ input: process.stdin, output: process.stdout })
  try {
    return /^y(es)?$/i.test((await terminal.question(question)).trim())
  } finally {
    terminal.close()
  }
}
