import { useTitle } from '../hooks';

/** A page of a later step of issue 29: its place in the navigation is kept. */
export function Later({ label }: { label: string }) {
  useTitle(label);
  return (
    <>
      <h1>{label}</h1>
      <p>This page comes in a later step of the console.</p>
    </>
  );
}

export function Missing() {
  useTitle('Not found');
  return (
    <>
      <h1>Not found</h1>
      <p>
        No such page. <a href="#/">Back to the overview</a>.
      </p>
    </>
  );
}
