// `npm run api`: an API report per package entry (api/*.api.md, @microsoft/api-extractor), made from
// the built .d.ts files. `npm run api -- --check` (CI) fails when the public surface differs
// from the checked-in reports: change them on purpose, with `npm run api`, in the same commit.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor'
import { ensurePackageBuilt, ROOT } from './build.ts'

const check = process.argv.includes('--check')
const { exports } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { types: string }>
}
await ensurePackageBuilt()

let changed = 0
for (const [subpath, target] of Object.entries(exports)) {
  if (typeof target === 'string') continue // ./package.json, ./react/ui/styles.css
  const name = subpath === '.' ? 'updraft-s3' : `updraft-s3-${subpath.slice(2).replace(/\//g, '-')}`
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: ROOT,
      mainEntryPointFilePath: join(ROOT, target.types),
      compiler: { tsconfigFilePath: join(ROOT, 'tsconfig.build.json') },
      apiReport: { enabled: true, reportFileName: `${name}.api.md`, reportFolder: join(ROOT, 'api'), reportTempFolder: join(ROOT, 'dist', 'api') },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        // Missing release tags and doc comments are the public-API pass's business; the report is the point here.
        extractorMessageReporting: { default: { logLevel: 'none' as never } },
        tsdocMessageReporting: { default: { logLevel: 'none' as never } },
        compilerMessageReporting: { default: { logLevel: 'warning' as never } },
      },
    },
    configObjectFullPath: join(ROOT, 'api', `${name}.json`),
    packageJsonFullPath: join(ROOT, 'package.json'),
  })
  const result = Extractor.invoke(config, { localBuild: !check, showVerboseMessages: false })
  if (result.apiReportChanged) {
    changed++
    console.log(`${check ? 'CHANGED' : 'updated'} api/${name}.api.md`)
  }
  if (!result.succeeded && !result.apiReportChanged) throw new Error(`api-extractor failed on ${subpath}: ${result.errorCount} error(s)`)
}
if (check && changed > 0) {
  console.log(`\nThe public API differs from api/*.api.md in ${changed} entr${changed === 1 ? 'y' : 'ies'}: if that is intended, run \`npm run api\` and commit the reports.`)
  process.exitCode = 1
} else console.log(check ? 'API reports match.' : 'API reports written.')
