// The STS GetFederationToken stand-in of the tests, in a process of its own. Prints its URL.
import { startStsServer } from '../../tests/helpers/sts-server.ts'

const { accessKeyId, secretAccessKey } = JSON.parse(process.argv[2] ?? '{}') as { accessKeyId: string; secretAccessKey: string }
const sts = await startStsServer({ caller: { accessKeyId, secretAccessKey }, issue: { accessKeyId: 'BENCH', secretAccessKey: 'BENCH' } })
console.log(sts.endpoint)
