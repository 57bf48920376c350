// The layers' import rules (docs/architecture.md), checked in CI by `npm run lint:layers`:
// data walks one way, HTTP -> request parsing -> principal -> GraphQL -> service -> database, and
// change -> event -> wire -> webhooks. A crossing fails with the rule's name.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'Imports run one way: a cycle means two parts lean on each other. A cycle closed only by type imports ' +
        '(the request context naming the types of what it carries) is erased at compile time and allowed.',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'resources-know-no-http',
      severity: 'error',
      comment: 'Resource modules and the GraphQL layer know nothing of REST, HTTP or the pages.',
      from: { path: '^src/(modules|graphql)/' },
      to: { path: '^src/(rest|http|pages)/' },
    },
    {
      name: 'rest-executes-operations-only',
      severity: 'error',
      comment: 'REST reaches data only by executing GraphQL operations: no database, no service.',
      from: { path: '^src/rest/' },
      to: { path: '^src/(db|modules|events|jobs|webhooks)/' },
    },
    {
      name: 'pages-use-graphql-or-auth',
      severity: 'error',
      comment: 'The hosted pages reach data through GraphQL operations or auth functions meant for them, never the database.',
      from: { path: '^src/pages/' },
      to: { path: '^src/(db|modules|events|jobs|webhooks|rest)/' },
    },
    {
      name: 'wire-is-neutral',
      severity: 'error',
      comment: 'wire/ renders resources for REST, webhooks and live events alike: it knows none of them.',
      from: { path: '^src/wire/' },
      to: { path: '^src/(rest|http|pages|oauth|modules|events|webhooks|jobs)/' },
    },
    {
      name: 'events-render-through-wire',
      severity: 'error',
      comment: 'Events, webhooks and jobs sit below the API surfaces: they never import REST, HTTP, the pages or OAuth.',
      from: { path: '^src/(events|webhooks|jobs)/' },
      to: { path: '^src/(rest|http|pages|oauth)/' },
    },
    {
      name: 'only-the-edge-reads-http',
      severity: 'error',
      comment: 'Raw requests (node:http) are read at the edge, server.ts and http/; below it only parsed requests travel. (Webhook delivery sends requests.)',
      from: { path: '^src/', pathNot: '^src/(server\\.ts|http/|webhooks/send\\.ts)' },
      to: { path: '^(node:)?http$' },
    },
    {
      name: 'observability-is-a-leaf',
      severity: 'error',
      comment: 'Every layer counts through observability/, so it imports nothing of Kassa but types: any other import would tie it to a layer above.',
      from: { path: '^src/observability/' },
      to: { path: '^src/', pathNot: '^src/observability/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'only-composition-imports-the-schema',
      severity: 'error',
      comment: 'The assembled schema is composed at the top (server.ts, cli.ts); a module importing it would import every other module.',
      from: { path: '^src/', pathNot: '^src/(server\\.ts|cli\\.ts|graphql/schema\\.ts)' },
      to: { path: '^src/graphql/schema\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js'] },
  },
};
