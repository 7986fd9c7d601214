import { registerDecorator, type ValidationArguments } from 'class-validator';

/**
 * The placeholders this repository ships where a secret belongs (`.env.example`:
 * `replace-me-with-32-or-more-random-characters`; deploy/k8s/secret.example.yaml:
 * `REPLACE_ME_…`; the dev overlay's `…-not-for-production`) and the usual
 * stand-ins. They are long enough for every length check, so only their words
 * give them away.
 */
const PLACEHOLDER = /replace[-_ ]?me|change[-_ ]?me|not[-_ ]for[-_ ]production/i;

/** Whether a configured secret is one of the known placeholders rather than a secret. */
export function isPlaceholderSecret(value: string): boolean {
  return PLACEHOLDER.test(value);
}

/** Whether the environment a class was validated from says NODE_ENV=production. */
export function isProduction(env: object): boolean {
  return (env as { NODE_ENV?: unknown }).NODE_ENV === 'production';
}

/**
 * The one check every secret setting shares: with NODE_ENV=production a known
 * placeholder is refused, with a message naming the variable (validateEnv
 * hides the value of every SECRET/KEY/PASSWORD/TOKEN variable, so it is never
 * printed). Outside production the placeholders still work, so a copied
 * `.env.example` runs on a laptop.
 */
export function NoPlaceholderInProduction(): PropertyDecorator {
  return (target, propertyName) => {
    registerDecorator({
      name: 'noPlaceholderInProduction',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown, args: ValidationArguments) =>
          !isProduction(args.object) || typeof value !== 'string' || !isPlaceholderSecret(value),
        defaultMessage: (args: ValidationArguments) =>
          `${args.property} holds a placeholder (as in .env.example), not a secret: NODE_ENV=production refuses it; ` +
          'generate one, e.g. openssl rand -base64 48',
      },
    });
  };
}
