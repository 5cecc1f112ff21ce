// AssemblyInfo.cs - the binding's version, for mcs and the .NET SDK alike (Cudot.csproj sets
// GenerateAssemblyInfo to false so that this file is the one source). Keep it equal to the
// <Version> of Cudot.csproj, the <version> of Cudot.nuspec and cudot.h: test.sh checks all four.
using System.Reflection;

[assembly: AssemblyTitle("Cudot")]
[assembly: AssemblyDescription("C# binding of cudot, deterministic dot products on CPU and GPU")]
[assembly: AssemblyVersion("1.14.0.0")]
[assembly: AssemblyFileVersion("1.14.0.0")]
[assembly: AssemblyInformationalVersion("1.14.0")]
