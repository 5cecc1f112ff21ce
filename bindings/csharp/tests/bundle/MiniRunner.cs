// MiniRunner.cs - runs the NUnit tests of Cudot.Tests.dll without nunit-console, for the GPU machine,
// which has no mono: make-bundle.sh packs this runner, the tests and the mono runtime into one program.
// (nunit-console itself cannot run from such a bundle: it looks for mono's installation on disk.)
//
// It supports what the tests use: [TestFixture] classes, [Test] methods, [TestCase(...)] arguments,
// and [Values]/[ValueSource] parameters combined as [Combinatorial] does. Assert.Ignore and
// Assert.Inconclusive count as ignored, never as passed. Prints one line per failure and per ignored
// case (with its reason), then the totals
// in the form "csharp: P passed, I ignored, F failed (T cases)"; exits 1 if any failed or none ran.
//   cudot-csharp-tests [SUBSTRING]   only the cases whose "Class.Method" contains SUBSTRING
using System;
using System.Collections;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using NUnit.Framework;

static class MiniRunner
{
    static int Main(string[] args)
    {
        string only = args.Length > 0 ? args[0] : null;
        Assembly tests = Assembly.Load("Cudot.Tests");
        int passed = 0, ignored = 0, failed = 0;
        var fixtures = tests.GetTypes()
            .Where(t => t.IsDefined(typeof(TestFixtureAttribute), true) && !t.IsAbstract)
            .OrderBy(t => t.FullName, StringComparer.Ordinal);
        foreach (Type type in fixtures)
        {
            object fixture = Activator.CreateInstance(type);
            var methods = type.GetMethods(BindingFlags.Public | BindingFlags.Instance | BindingFlags.Static)
                .Where(m => m.IsDefined(typeof(TestAttribute), true) || m.IsDefined(typeof(TestCaseAttribute), true))
                .OrderBy(m => m.Name, StringComparer.Ordinal);
            foreach (MethodInfo method in methods)
            {
                string name = type.Name + "." + method.Name;
                if (only != null && !name.Contains(only)) continue;
                foreach (object[] arguments in Cases(type, method))
                {
                    string label = name + "(" + string.Join(", ", arguments.Select(Show)) + ")";
                    switch (Run(fixture, method, arguments, out string why))
                    {
                        case Outcome.Passed: passed++; break;
                        case Outcome.Ignored:
                            ignored++;
                            Console.WriteLine("ignored " + label + ": " + why);
                            break;
                        default:
                            failed++;
                            Console.WriteLine("FAILED " + label + ": " + why);
                            break;
                    }
                }
            }
        }
        int total = passed + ignored + failed;
        Console.WriteLine("csharp: {0} passed, {1} ignored, {2} failed ({3} cases)", passed, ignored, failed, total);
        return failed == 0 && total > 0 ? 0 : 1;
    }

    enum Outcome { Passed, Ignored, Failed }

    // Each case runs on a thread of its own, as NUnit runs them: mono's garbage collector scans stacks
    // conservatively, and a stale slot left on a long-lived thread's stack by an earlier case can keep
    // objects reachable that a case (ReliabilityTests' finalizer test) expects to be collected.
    static Outcome Run(object fixture, MethodInfo method, object[] arguments, out string why)
    {
        Outcome outcome = Outcome.Failed;
        string reason = "";
        var thread = new System.Threading.Thread(() => outcome = RunHere(fixture, method, arguments, out reason),
                                                 16 << 20);
        thread.Start();
        thread.Join();
        why = reason;
        return outcome;
    }

    static Outcome RunHere(object fixture, MethodInfo method, object[] arguments, out string why)
    {
        why = "";
        try
        {
            method.Invoke(method.IsStatic ? null : fixture, arguments);
            return Outcome.Passed;
        }
        catch (TargetInvocationException e)
        {
            Exception inner = e.InnerException ?? e;
            if (inner is SuccessException) return Outcome.Passed;
            if (inner is IgnoreException || inner is InconclusiveException)
            {
                why = inner.Message;
                return Outcome.Ignored;
            }
            why = inner.GetType().Name + ": " + inner.Message;
            return Outcome.Failed;
        }
        catch (Exception e)  // arguments that do not fit the method: the runner's fault, counted as a failure
        {
            why = "cannot call: " + e.GetType().Name + ": " + e.Message;
            return Outcome.Failed;
        }
    }

    // The argument lists of one test method: its [TestCase]s, or every combination of its parameters' values.
    static IEnumerable<object[]> Cases(Type type, MethodInfo method)
    {
        ParameterInfo[] parameters = method.GetParameters();
        var testCases = (TestCaseAttribute[])method.GetCustomAttributes(typeof(TestCaseAttribute), true);
        if (testCases.Length > 0)
        {
            foreach (TestCaseAttribute c in testCases)
                yield return parameters.Select((p, i) => Fit(c.Arguments[i], p.ParameterType)).ToArray();
            yield break;
        }
        var values = parameters.Select(p => ValuesOf(type, p).Cast<object>().ToList()).ToList();
        IEnumerable<object[]> combos = new[] { new object[0] };
        foreach (var list in values)
        {
            var choices = list;
            combos = combos.SelectMany(prefix => choices.Select(v => prefix.Concat(new[] { v }).ToArray())).ToList();
        }
        foreach (object[] combo in combos) yield return combo;
    }

    static IEnumerable ValuesOf(Type type, ParameterInfo p)
    {
        foreach (ValuesAttribute v in p.GetCustomAttributes(typeof(ValuesAttribute), true))
            return ((IEnumerable)v.GetData(p)).Cast<object>().Select(o => Fit(o, p.ParameterType)).ToList();
        foreach (ValueSourceAttribute s in p.GetCustomAttributes(typeof(ValueSourceAttribute), true))
            return Source(s.SourceType ?? type, s.SourceName);
        throw new NotSupportedException("parameter " + p.Name + " has no [Values] or [ValueSource]");
    }

    static IEnumerable Source(Type type, string name)
    {
        const BindingFlags any = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Static | BindingFlags.Instance;
        object owner = null;
        MemberInfo member = type.GetMember(name, any).FirstOrDefault();
        if (member == null) throw new MissingMemberException(type.Name, name);
        bool isStatic = (member as FieldInfo)?.IsStatic ?? (member as PropertyInfo)?.GetGetMethod(true).IsStatic
                        ?? ((MethodInfo)member).IsStatic;
        if (!isStatic) owner = Activator.CreateInstance(type);
        if (member is FieldInfo f) return (IEnumerable)f.GetValue(owner);
        if (member is PropertyInfo prop) return (IEnumerable)prop.GetValue(owner, null);
        return (IEnumerable)((MethodInfo)member).Invoke(owner, null);
    }

    // NUnit converts an attribute's argument to the parameter's type (an int literal for a long, an
    // integer for an enum, a double for a float); so does this.
    static object Fit(object value, Type target)
    {
        if (value == null || target.IsInstanceOfType(value)) return value;
        if (target.IsEnum) return Enum.ToObject(target, value);
        if (value is IConvertible) return Convert.ChangeType(value, target);
        return value;
    }

    static string Show(object o)
    {
        try
        {
            if (o is Array a) return "[" + string.Join(",", a.Cast<object>().Select(Show)) + "]";
            return o == null ? "null" : o.ToString();
        }
        catch (Exception e)  // a label must never stop the run
        {
            return "<" + e.GetType().Name + ">";
        }
    }
}
