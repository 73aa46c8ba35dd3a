import { useId, type InputHTMLAttributes, type ReactNode } from 'react';

/** A labelled input (a checkbox before its label), with an optional help line tied to it for screen readers. */
export function Field({ label, help, ...input }: { label: ReactNode; help?: string; name: string } & InputHTMLAttributes<HTMLInputElement>) {
  const helpId = useId();
  const box = <input {...input} aria-describedby={help ? helpId : undefined} />;
  // A checkbox stands before its label, every other input after it.
  return (
    <label>
      {input.type === 'checkbox' ? box : label}
      {input.type === 'checkbox' ? label : box}
      {help && <small id={helpId}>{help}</small>}
    </label>
  );
}

/** A labelled choice among fixed values. */
export function SelectField({ label, name, options, defaultValue }: { label: string; name: string; options: readonly string[]; defaultValue?: string }) {
  return (
    <label>
      {label}
      <select name={name} defaultValue={defaultValue ?? options[0]}>
        {options.map((option) => (
          <option key={option}>{option}</option>
        ))}
      </select>
    </label>
  );
}

/** Boxes under one legend; each box is named `name(value)` and sent as "on" when ticked. */
export function CheckboxGroup<V extends string>({
  legend,
  options,
  name,
  checked,
  switches,
}: {
  legend: string;
  options: readonly (readonly [V, string])[];
  name: (value: V) => string;
  checked: (value: V) => boolean;
  switches?: boolean;
}) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {options.map(([value, label]) => (
        <label key={value}>
          <input type="checkbox" role={switches ? 'switch' : undefined} name={name(value)} defaultChecked={checked(value)} />
          {label}
        </label>
      ))}
    </fieldset>
  );
}
