// The server key's rights (server/key-policy.ts): one policy, the one the code needs, said the same
// way by the startup warning and by `npx updraft-s3 doctor` (tests/cli-doctor.test.ts holds them to it; issue 23: the warning named only
// PutObject and AbortMultipartUpload, and a key given just those failed every /complete).
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { resolveConfig } from '../../server/config.ts'
import { type KeyPolicy, keyModeOf, renderServerKeyPolicy, serverKeyPolicy } from '../../server/key-policy.ts'

const actionsOf = (policy: KeyPolicy) => policy.Statement.flatMap(({ Action }) => [Action].flat())

describe('the policy per mode', () => {
  it('presigned: the upload actions, reading and deleting under the key prefix (/complete), listing multipart uploads on the bucket (sweep, /duplicates); nothing else', () => {
    expect(serverKeyPolicy({ bucket: 'uploads' })).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: ['s3:PutObject', 's3:AbortMultipartUpload', 's3:GetObject', 's3:DeleteObject'],
          Resource: 'arn:aws:s3:::uploads/next-s3-uploads/*',
        },
        { Effect: 'Allow', Action: 's3:ListBucketMultipartUploads', Resource: 'arn:aws:s3:::uploads' },
      ],
    })
  })

  it('token modes add exactly the STS call they make; resumable adds listing an upload’s parts', () => {
    expect(actionsOf(serverKeyPolicy({ bucket: 'b', mode: 'federation' }))).toContain('sts:GetFederationToken')
    const role = actionsOf(serverKeyPolicy({ bucket: 'b', mode: 'assume-role' }))
    expect(role).toContain('sts:AssumeRole')
    expect(role).not.toContain('sts:GetFederationToken')
    expect(actionsOf(serverKeyPolicy({ bucket: 'b' }))).not.toContain('s3:ListMultipartUploadParts')
    expect(actionsOf(serverKeyPolicy({ bucket: 'b', resumable: true }))).toContain('s3:ListMultipartUploadParts')
  })

  it('a directory bucket needs CreateSession on the bucket (its sessions cover every call)', () => {
    expect(serverKeyPolicy({ bucket: 'b--use1-az4--x-s3' }).Statement).toEqual([
      {
        Effect: 'Allow',
        Action: 's3express:CreateSession',
        Resource: 'arn:aws:s3express:REGION:ACCOUNT_ID:bucket/b--use1-az4--x-s3',
      },
    ])
  })

  it('the mode follows the STS the config calls: none on a custom endpoint, AssumeRole when set, GetFederationToken on AWS', () => {
    const base = { accessKeyId: 'k', secretAccessKey: 's', bucket: 'b', region: 'us-east-1' }
    expect(keyModeOf(resolveConfig({ ...base, endpoint: 'http://127.0.0.1:9000' }, {}))).toBe('presigned')
    expect(
      keyModeOf(
        resolveConfig(
          { ...base, endpoint: 'http://127.0.0.1:9000', sts: { mode: 'assume-role', roleArn: 'arn:aws:iam:::role/r' } },
          {},
        ),
      ),
    ).toBe('assume-role')
    expect(keyModeOf(resolveConfig(base, {}))).toBe('federation')
  })

  it('renders as two-space JSON, the form the docs quote', () => {
    expect(renderServerKeyPolicy({ bucket: 'uploads' })).toBe(
      JSON.stringify(serverKeyPolicy({ bucket: 'uploads' }), null, 2),
    )
  })
})

describe('covers what the server code sends', () => {
  /** The IAM action each SDK command of server/ needs (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazons3.html). */
  const NEEDS: Record<string, string> = {
    PutObject: 's3:PutObject',
    CreateMultipartUpload: 's3:PutObject',
    UploadPart: 's3:PutObject',
    CompleteMultipartUpload: 's3:PutObject',
    AbortMultipartUpload: 's3:AbortMultipartUpload',
    HeadObject: 's3:GetObject',
    GetObject: 's3:GetObject',
    DeleteObject: 's3:DeleteObject',
    ListParts: 's3:ListMultipartUploadParts',
    ListMultipartUploads: 's3:ListBucketMultipartUploads',
    GetFederationToken: 'sts:GetFederationToken',
    AssumeRole: 'sts:AssumeRole',
    CreateSession: 's3express:CreateSession',
  }
  const folder = join(import.meta.dirname, '../../server')
  const sent = new Set(
    readdirSync(folder)
      .filter((name) => name.endsWith('.ts'))
      .flatMap((name) =>
        [...readFileSync(join(folder, name), 'utf8').matchAll(/new (\w+)Command\(/g)].map((match) => match[1]!),
      ),
  )

  it('knows every command server/ sends (a new one must be added here and to the policy)', () => {
    expect(sent.size).toBeGreaterThan(5)
    expect([...sent].filter((command) => !(command in NEEDS))).toEqual([])
  })

  it('grants each one in the mode that sends it', () => {
    const granted = new Set([
      ...actionsOf(serverKeyPolicy({ bucket: 'b', mode: 'federation', resumable: true })),
      ...actionsOf(serverKeyPolicy({ bucket: 'b', mode: 'assume-role' })),
      ...actionsOf(serverKeyPolicy({ bucket: 'b--use1-az4--x-s3' })),
    ])
    expect([...sent].map((command) => NEEDS[command]).filter((action) => !granted.has(action!))).toEqual([])
  })
})
