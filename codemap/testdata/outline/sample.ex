# Sample for the Elixir outline.
defmodule Sample.Greeter do
  @moduledoc "Greets."

  def hello(name) do
    "hello " <> name
  end

  def short(x), do: x

  defp secret do
    :ok
  end

  defmacro debug(expr) do
    quote do: IO.inspect(unquote(expr))
  end

  defguard is_even(n) when rem(n, 2) == 0

  defmodule Inner do
    def nested, do: :nested
  end
end

defprotocol Sample.Size do
  def size(data)
end

defimpl Sample.Size, for: Map do
  def size(map), do: map_size(map)
end
