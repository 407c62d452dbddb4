<?php
// Sample for the PHP outline.
namespace App\Models;

const VERSION = "1.0";

interface Greeter
{
    public function greet(string $name): string;
}

trait Loggable
{
    public function log(string $msg): void
    {
        echo $msg;
    }
}

class User implements Greeter
{
    use Loggable;

    const ROLE = "user";

    public function __construct(private string $name)
    {
    }

    public function greet(string $name): string
    {
        return "Hello $name";
    }

    public static function make(): static
    {
        return new static("x");
    }
}

enum Status: string
{
    case Active = "active";
}

function helper($x)
{
    $inner = function () {
        return 1;
    };
    return $x;
}
