import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** Where the page is written, from the repository's root. */
export const PAGE_PATH = 'docs/configuration.md';

/** The apps, in the page's order, and the file whose `loadEnv` composes each one's env classes. */
export const APPS = [
  { app: 'gateway', title: 'Gateway', envFile: 'apps/gateway/src/config/gateway.env.ts' },
  {
    app: 'message-service',
    title: 'Message service',
    envFile: 'apps/message-service/src/config/message-service.env.ts',
  },
  { app: 'agent-pod', title: 'Agent pod', envFile: 'apps/agent-pod/src/config/agent-pod.env.ts' },
] as const;
export type App = (typeof APPS)[number]['app'];

/** One environment variable: a property of an env class. */
export interface Variable {
  name: string;
  /** Each reading app's default (from the initializer of the most derived class that declares it). */
  defaults: Partial<Record<App, string | number>>;
  /** A default that depends on the process (its pid, its host name), in words: the JSDoc's `@defaultValue`. */
  defaultInWords?: string;
  /** What the decorators accept, in words. */
  accepted: string;
  /** The property's JSDoc. */
  description: string;
}

/** One env class (a concern), with the apps whose `loadEnv` composes it. */
export interface Concern {
  className: string;
  /** The repository-relative file declaring the class. */
  file: string;
  title: string;
  /** The class's JSDoc. */
  description: string;
  apps: App[];
  variables: Variable[];
}

export interface ConfigurationModel {
  /** Concerns read by more than one app (libs/config), then each app's own, in `loadEnv` order. */
  shared: Concern[];
  byApp: Record<App, Concern[]>;
}

/** A documented failure: the env classes cannot be turned into the page (a variable without JSDoc…). */
export class ConfigurationDocError extends Error {}

/**
 * The env classes, read with the TypeScript compiler: each app's `loadEnv`
 * (`validateEnv(env, A, B, …)`) names its classes; a subclass (an app's own
 * management port) counts as its base class's concern. `overrides` replaces
 * files' text (repository-relative path → text), for tests.
 */
export function configurationModel(root: string, overrides: Record<string, string> = {}): ConfigurationModel {
  const program = createProgram(root, overrides);
  const checker = program.getTypeChecker();
  const concerns = new Map<string, Concern>();
  const order: Concern[] = [];
  const problems: string[] = [];

  for (const { app, envFile } of APPS) {
    const source = program.getSourceFile(resolve(root, envFile));
    if (!source) throw new ConfigurationDocError(`${envFile}: not found`);
    for (const chain of loadEnvClasses(source, checker, envFile)) {
      const rootClass = chain.at(-1)!;
      const key = `${rootClass.getSourceFile().fileName}#${rootClass.name!.text}`;
      let concern = concerns.get(key);
      if (!concern) {
        concern = describeClass(rootClass, root, problems);
        concerns.set(key, concern);
        order.push(concern);
      }
      concern.apps.push(app);
      addVariables(concern, chain, app, checker, root, problems);
    }
  }
  if (problems.length) throw new ConfigurationDocError([...new Set(problems)].join('\n'));

  const byApp = Object.fromEntries(APPS.map(({ app }) => [app, [] as Concern[]])) as Record<App, Concern[]>;
  const shared: Concern[] = [];
  for (const concern of order) {
    if (concern.apps.length > 1) shared.push(concern);
    else byApp[concern.apps[0]].push(concern);
  }
  return { shared, byApp };
}

function createProgram(root: string, overrides: Record<string, string>): ts.Program {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    experimentalDecorators: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    // The libs' sources, not their dist: the page needs initializers, which declarations drop.
    paths: { '@mcpgw/*': [join(root, 'libs/*/src/index.ts')] },
  };
  const host = ts.createCompilerHost(options, true);
  const texts = new Map(Object.entries(overrides).map(([path, text]) => [resolve(root, path), text]));
  const { getSourceFile, readFile, fileExists } = host;
  host.readFile = (file) => texts.get(resolve(file)) ?? readFile.call(host, file);
  host.fileExists = (file) => texts.has(resolve(file)) || fileExists.call(host, file);
  host.getSourceFile = (file, language, ...rest) => {
    const text = texts.get(resolve(file));
    return text === undefined
      ? getSourceFile.call(host, file, language, ...rest)
      : ts.createSourceFile(file, text, language, true);
  };
  return ts.createProgram(
    APPS.map(({ envFile }) => resolve(root, envFile)),
    options,
    host,
  );
}

/** The classes `loadEnv` passes to `validateEnv`, each as its chain: the class, then its bases. */
function loadEnvClasses(source: ts.SourceFile, checker: ts.TypeChecker, envFile: string): ts.ClassDeclaration[][] {
  const loadEnv = source.statements.find(
    (s): s is ts.FunctionDeclaration => ts.isFunctionDeclaration(s) && s.name?.text === 'loadEnv',
  );
  let call: ts.CallExpression | undefined;
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'validateEnv')
      call = node;
    else ts.forEachChild(node, visit);
  };
  if (loadEnv) visit(loadEnv);
  if (!call) throw new ConfigurationDocError(`${envFile}: no loadEnv() calling validateEnv(env, …classes)`);
  return call.arguments.slice(1).map((arg) => {
    const chain: ts.ClassDeclaration[] = [];
    let declaration = classOf(arg, checker);
    while (declaration) {
      chain.push(declaration);
      const base = declaration.heritageClauses?.find((c) => c.token === ts.SyntaxKind.ExtendsKeyword)?.types[0];
      declaration = base && classOf(base.expression, checker);
    }
    if (!chain.length) throw new ConfigurationDocError(`${envFile}: ${arg.getText()} is not a class`);
    return chain;
  });
}

function classOf(expression: ts.Expression, checker: ts.TypeChecker): ts.ClassDeclaration | undefined {
  let symbol = checker.getSymbolAtLocation(expression);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  return symbol?.declarations?.find(ts.isClassDeclaration);
}

/** A node's JSDoc comment text (tags aside), and its tags by name. */
function jsDoc(node: ts.Node): { text: string; tags: Map<string, string> } {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  const doc = docs.at(-1);
  const text = ts.getTextOfJSDocComment(doc?.comment) ?? '';
  const tags = new Map(
    (doc?.tags ?? []).map((tag) => [tag.tagName.text, ts.getTextOfJSDocComment(tag.comment)?.trim() ?? '']),
  );
  return { text: oneLine(text), tags };
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** The concern's title: its JSDoc's lead, up to the first `:` or `.`, a parenthesised path dropped. */
function describeClass(declaration: ts.ClassDeclaration, root: string, problems: string[]): Concern {
  const name = declaration.name!.text;
  const file = relative(root, declaration.getSourceFile().fileName);
  const { text } = jsDoc(declaration);
  if (!text) problems.push(`${file}: ${name} has no JSDoc naming its concern`);
  const title = text
    .split(/:\s|\.(\s|$)/)[0]
    .replace(/\s*\([^)]*\/[^)]*\)/g, '')
    .trim();
  // The paragraph goes on from a plain title ("NATS: where the bus is…" → "Where the bus is…").
  const rest = /^[:.]\s/.test(text.slice(title.length, title.length + 2)) ? text.slice(title.length + 2) : text;
  const description = rest[0].toUpperCase() + rest.slice(1);
  return { className: name, file, title, description, apps: [], variables: [] };
}

/** The chain's properties, the root class's first; each app's default from the most derived initializer. */
function addVariables(
  concern: Concern,
  chain: ts.ClassDeclaration[],
  app: App,
  checker: ts.TypeChecker,
  root: string,
  problems: string[],
): void {
  const fromRoot = [...chain].reverse();
  for (const declaration of fromRoot) {
    for (const member of declaration.members) {
      if (!ts.isPropertyDeclaration(member) || !ts.isIdentifier(member.name)) continue;
      const name = member.name.text;
      const where = `${relative(root, declaration.getSourceFile().fileName)}: ${name}`;
      let variable = concern.variables.find((v) => v.name === name);
      if (!variable) {
        const { text, tags } = jsDoc(member);
        if (!text) problems.push(`${where} has no JSDoc saying what it does`);
        variable = {
          name,
          defaults: {},
          defaultInWords: tags.get('defaultValue'),
          accepted: accepted(member, checker),
          description: text,
        };
        concern.variables.push(variable);
      }
      if (variable.defaultInWords) continue;
      const value = member.initializer && constant(member.initializer, checker);
      if (value === undefined)
        problems.push(`${where}: its default is not a constant; say it in words with @defaultValue`);
      else variable.defaults[app] = value;
    }
  }
}

/** A literal, or a constant the type checker knows (an imported `const X = 15_000`). */
function constant(expression: ts.Expression, checker: ts.TypeChecker): string | number | undefined {
  if (ts.isNumericLiteral(expression)) return Number(expression.text);
  if (ts.isStringLiteral(expression) || ts.isNoSubstitutionTemplateLiteral(expression)) return expression.text;
  if (ts.isPrefixUnaryExpression(expression) && expression.operator === ts.SyntaxKind.MinusToken) {
    const value = constant(expression.operand, checker);
    return typeof value === 'number' ? -value : undefined;
  }
  const type = checker.getTypeAtLocation(expression);
  if (type.isNumberLiteral() || type.isStringLiteral()) return type.value;
  return undefined;
}

/** A regular expression literal, directly or through the constant it is held in. */
function regex(expression: ts.Expression, checker: ts.TypeChecker): string | undefined {
  if (ts.isRegularExpressionLiteral(expression)) return expression.text;
  let symbol = checker.getSymbolAtLocation(expression);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  const declaration = symbol?.valueDeclaration;
  if (declaration && ts.isVariableDeclaration(declaration) && declaration.initializer)
    return regex(declaration.initializer, checker);
  return undefined;
}

/** The values of `['a', 'b']`, or of a constant tuple (`X = ['a', 'b'] as const`). */
function values(expression: ts.Expression, checker: ts.TypeChecker): (string | number)[] | undefined {
  if (ts.isArrayLiteralExpression(expression)) {
    const items = expression.elements.map((e) => constant(e, checker));
    return items.every((v) => v !== undefined) ? (items as (string | number)[]) : undefined;
  }
  const type = checker.getTypeAtLocation(expression);
  if (!checker.isTupleType(type)) return undefined;
  const items = checker
    .getTypeArguments(type as ts.TypeReference)
    .map((t) => (t.isStringLiteral() || t.isNumberLiteral() ? t.value : undefined));
  return items.every((v) => v !== undefined) ? (items as (string | number)[]) : undefined;
}

const code = (value: string | number): string => `\`${value}\``;

/** A message option's text (`{ message: '…' }`), the variable's name dropped from its front. */
function message(options: ts.Expression | undefined, name: string): string | undefined {
  if (!options || !ts.isObjectLiteralExpression(options)) return undefined;
  const property = options.properties.find(
    (p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && p.name.getText() === 'message',
  );
  const text = property && ts.isStringLiteralLike(property.initializer) ? property.initializer.text : undefined;
  return text?.replace(new RegExp(`^${name} `), '');
}

/** What the class-validator decorators of a property accept, in words. */
function accepted(member: ts.PropertyDeclaration, checker: ts.TypeChecker): string {
  const name = (member.name as ts.Identifier).text;
  let min: string | number | undefined;
  let max: string | number | undefined;
  let integer = false;
  let condition: string | undefined;
  const parts: string[] = [];
  for (const decorator of ts.getDecorators(member) ?? []) {
    const call = decorator.expression;
    if (!ts.isCallExpression(call) || !ts.isIdentifier(call.expression)) continue;
    const [first, second] = call.arguments;
    switch (call.expression.text) {
      case 'IsInt':
        integer = true;
        break;
      case 'Min':
        min = constant(first, checker);
        break;
      case 'Max':
        max = constant(first, checker);
        break;
      case 'IsString':
        break;
      case 'IsIn':
        parts.push((values(first, checker) ?? [first.getText()]).map(code).join(', '));
        break;
      case 'MinLength':
        parts.push(constant(first, checker) === 1 ? 'not empty' : `at least ${constant(first, checker)} characters`);
        break;
      case 'Matches': {
        const pattern = regex(first, checker);
        parts.push(message(second, name) ?? (pattern ? `matches ${code(pattern)}` : `matches ${first.getText()}`));
        break;
      }
      case 'NoPlaceholderInProduction':
        parts.push('no placeholder in production');
        break;
      case 'ValidateIf': {
        const test = first && ts.isArrowFunction(first) ? first : undefined;
        const param = test?.parameters[0]?.name.getText();
        const body = test && oneLine(test.body.getText());
        condition = body && param ? body.replaceAll(`${param}.`, '') : body;
        break;
      }
      case 'ValidateBy':
        parts.push(validateByMessage(first, name) ?? 'checked at start');
        break;
      default:
        parts.push(customCheck(call.expression, checker) ?? `checked by \`${call.expression.text}()\``);
    }
  }
  if (integer) {
    const range =
      min !== undefined && max !== undefined
        ? ` ${min}–${max}`
        : min !== undefined
          ? ` ≥ ${min}`
          : max !== undefined
            ? ` ≤ ${max}`
            : '';
    parts.unshift(`integer${range}`);
  }
  const text = parts.join('; ') || 'any text';
  return condition ? `when ${code(condition)}: ${text}` : text;
}

/** `ValidateBy({ validator: { defaultMessage: () => '…' } })`: that message. */
function validateByMessage(options: ts.Expression | undefined, name: string): string | undefined {
  let found: string | undefined;
  const visit = (node: ts.Node): void => {
    if (
      ts.isPropertyAssignment(node) &&
      node.name.getText() === 'defaultMessage' &&
      ts.isArrowFunction(node.initializer) &&
      ts.isStringLiteralLike(node.initializer.body)
    )
      found = node.initializer.body.text.replace(new RegExp(`^${name} `), '');
    else ts.forEachChild(node, visit);
  };
  if (options) visit(options);
  return found;
}

/** A project decorator (`IssuerList()`): its JSDoc, which says what it checks. */
function customCheck(callee: ts.Identifier, checker: ts.TypeChecker): string | undefined {
  let symbol = checker.getSymbolAtLocation(callee);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  const declaration = symbol?.declarations?.[0];
  const text = declaration && jsDoc(declaration).text;
  return text ? text.replace(/\.$/, '') : undefined;
}

// ---------------------------------------------------------------------------
// The page

const INTRO = `Every app validates its environment at start and refuses to run with a clear
message naming each bad variable (a secret's value is never printed). With
\`NODE_ENV=production\` (the Docker image sets it) an app also refuses to start
without the secrets its replicas must share, with a secret left at a placeholder,
or without NATS credentials: see [Deployment](#deployment). The admin CLI
(\`npm run admin\`) reads the gateway's variables.

Settings read by more than one app come first, once each, with the apps that
read them; then each app's own, by concern. "Accepted" is what the validation
takes (anything else stops the start); an empty variable counts as unset.`;

const OUTRO = `What the apps serve on their management port (\`/health\`, \`/ready\`, \`/metrics\`) and what
their log lines hold: [observability.md](observability.md). How each secret is issued
and rotated: [security.md](security.md#credentials-how-each-is-issued-and-rotated).`;

const HEADER = `<!-- Generated by \`npm run docs:configuration\` from the apps' env classes (tools/docs/src/configuration.ts): edit their JSDoc, not this page. -->`;

/** A heading's anchor as GitHub makes it. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/**
 * Prose from a JSDoc into a table cell or paragraph: a repository path to a
 * Markdown file (`libs/bus/README.md`, `timeouts/README.md#x` from the app's
 * src/, `docs/oauth.md#y`) becomes a link from docs/; code spans are left
 * alone; pipes are escaped.
 */
function markdown(text: string, file: string, root: string): string {
  const appSrc = resolve(root, dirname(dirname(file)));
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => {
      if (i % 2 === 1) return part;
      return part.replace(/(?<![\w./-])((?:\.\.\/)?[\w.-]+(?:\/[\w.-]+)*\.md)(#[\w-]+)?/g, (match, path, anchor) => {
        const target = [resolve(root, path), resolve(appSrc, path)].find((p) => existsSync(p));
        if (!target) throw new ConfigurationDocError(`${file}: ${path} (in a JSDoc) names no file`);
        return `[${path}${anchor ?? ''}](${relative(resolve(root, 'docs'), target)}${anchor ?? ''})`;
      });
    })
    .join('')
    .replace(/\|/g, '\\|');
}

function defaultCell(variable: Variable, apps: App[]): string {
  if (variable.defaultInWords) return variable.defaultInWords;
  const values = apps.map((app) => variable.defaults[app]!);
  if (new Set(values.map(String)).size > 1) return apps.map((app, i) => `${app} ${code(values[i])}`).join(', ');
  return values[0] === '' ? '(none)' : code(values[0]);
}

function readBy(apps: App[]): string {
  return apps.length === APPS.length ? 'all three apps' : apps.join(' and ');
}

function concernSection(concern: Concern, root: string, shared: boolean): string {
  const lines = [
    `### ${concern.title}`,
    '',
    ...(concern.description ? [markdown(concern.description, concern.file, root), ''] : []),
    `\`${concern.className}\` in [${concern.file}](${relative(resolve(root, 'docs'), resolve(root, concern.file))})${
      shared ? `, read by ${readBy(concern.apps)}` : ''
    }.`,
    '',
    '| variable | default | accepted | what it does |',
    '|---|---|---|---|',
    ...concern.variables.map(
      (v) =>
        `| \`${v.name}\` | ${defaultCell(v, concern.apps)} | ${markdown(v.accepted, concern.file, root)} | ${markdown(
          v.description,
          concern.file,
          root,
        )} |`,
    ),
  ];
  return lines.join('\n');
}

/** docs/configuration.md from the model. */
export function renderConfiguration(model: ConfigurationModel, root: string): string {
  const parts: { title: string; concerns: Concern[]; shared: boolean }[] = [
    { title: 'Shared by the apps', concerns: model.shared, shared: true },
    ...APPS.map(({ app, title }) => ({ title, concerns: model.byApp[app], shared: false })),
  ];
  const contents = parts
    .map(
      (part) =>
        `- [${part.title}](#${slug(part.title)}): ${part.concerns
          .map((c) => `[${c.title}](#${slug(c.title)})`)
          .join(', ')}`,
    )
    .join('\n');
  const sections = parts.map(
    (part) =>
      `## ${part.title}\n\n${part.concerns.map((concern) => concernSection(concern, root, part.shared)).join('\n\n')}`,
  );
  return [
    HEADER,
    '',
    '# Configuration',
    '',
    INTRO,
    '',
    contents,
    '',
    ...sections.join('\n\n').split('\n'),
    '',
    OUTRO,
    '',
  ].join('\n');
}

/** The page as `npm run docs:configuration` writes it. */
export function configurationPage(root: string, overrides: Record<string, string> = {}): string {
  return renderConfiguration(configurationModel(root, overrides), root);
}
