import type { PluginNames } from './names.js'

/** Versions the generated package pins or ranges; a test keeps them equal to the Cordage repository's own. */
export const VERSIONS = {
  cordis: '4.0.0-rc.10',
  schemastery: '3.18.0',
  typescript: '5.9.3',
  vitest: '4.1.12',
  typesNode: '^20.19.0',
  node: '>=20.19',
} as const

type Json = Record<string, unknown>

const description = (names: PluginNames) => `A Cordage tool package: ${names.tool}.`

/** `package.json` of a package published on its own, depending on the released `@cordage/*` packages at `cordageVersion`. */
export function standaloneManifest(names: PluginNames, cordageVersion: string): Json {
  const cordage = `^${cordageVersion}`
  return {
    name: names.packageName,
    version: '0.1.0',
    description: description(names),
    type: 'module',
    license: 'MIT',
    keywords: ['cordage', 'cordage-plugin', 'cordis'],
    engines: { node: VERSIONS.node },
    main: './dist/index.js',
    types: './dist/index.d.ts',
    exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
    files: ['dist'],
    scripts: {
      build: 'tsc -p tsconfig.build.json',
      typecheck: 'tsc -p tsconfig.json',
      test: 'tsc -p tsconfig.json && vitest run',
      bench: 'vitest bench --run',
      prepack: 'npm run build',
    },
    dependencies: { schemastery: VERSIONS.schemastery },
    // The host's copies: a second cordis is a different module instance from the one running the plugins.
    peerDependencies: { '@cordage/core': cordage, '@cordage/registry': cordage, cordis: `^${VERSIONS.cordis}` },
    peerDependenciesMeta: { '@cordage/registry': { optional: true } },
    devDependencies: {
      '@cordage/core': cordage,
      '@cordage/registry': cordage,
      '@cordage/testing': cordage,
      '@types/node': VERSIONS.typesNode,
      cordis: VERSIONS.cordis,
      typescript: VERSIONS.typescript,
      vitest: VERSIONS.vitest,
    },
  }
}

/** `package.json` of a plugin inside the Cordage repository, shaped like its siblings in `plugins/`. */
export function workspaceManifest(names: PluginNames, version: string, repositoryUrl: string): Json {
  return {
    name: names.packageName,
    version,
    description: description(names),
    type: 'module',
    license: 'MIT',
    repository: { type: 'git', url: repositoryUrl, directory: `plugins/${names.name}` },
    engines: { node: VERSIONS.node },
    main: './dist/index.js',
    types: './dist/index.d.ts',
    exports: { '.': { 'cordage-source': './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' } },
    files: ['dist', 'src'],
    dependencies: { '@cordage/core': 'workspace:*', '@cordage/registry': 'workspace:*', schemastery: VERSIONS.schemastery },
    peerDependencies: { cordis: `^${VERSIONS.cordis}` },
    devDependencies: { cordis: VERSIONS.cordis, '@cordage/testing': 'workspace:*' },
    publishConfig: { access: 'public' },
  }
}

const compilerOptions = {
  target: 'ES2022',
  lib: ['ES2023'],
  module: 'ESNext',
  // cordis 4's type declarations need bundler-style resolution; the emitted imports name their .js files.
  moduleResolution: 'Bundler',
  types: ['node'],
  strict: true,
  noImplicitOverride: true,
  isolatedModules: true,
  esModuleInterop: true,
  skipLibCheck: true,
}

/** The TypeScript configs of a package on its own: `tsconfig.json` checks src and tests, `tsconfig.build.json` emits dist. */
export function standaloneTsconfigs(): Record<string, Json> {
  return {
    'tsconfig.json': { compilerOptions: { ...compilerOptions, noEmit: true }, include: ['src', 'tests'] },
    'tsconfig.build.json': {
      extends: './tsconfig.json',
      compilerOptions: { noEmit: false, rootDir: 'src', outDir: 'dist', declaration: true, declarationMap: true, sourceMap: true },
      include: ['src'],
    },
  }
}

/** The TypeScript config of a plugin in the repository: the shared base, built by `pnpm build`. */
export function workspaceTsconfig(): Json {
  return {
    extends: '../../tsconfig.base.json',
    compilerOptions: { rootDir: 'src', outDir: 'dist' },
    include: ['src'],
    references: [{ path: '../../packages/core' }, { path: '../../packages/registry' }],
  }
}
